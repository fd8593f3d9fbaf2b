import json, os
D=os.path.dirname(os.path.abspath(__file__))
def L(name, rx, kind=None):
    d={"name":name,"regex":rx}
    if kind: d["kind"]=kind
    return d
lit=lambda s:{"literal":s}
rx=lambda s:{"regex":s}
def T(*pairs): return [list(p) for p in pairs]

basic=[
 {"name":"keywords_identifiers","lexemes":[L("IF",lit("if")),L("ELSE",lit("else")),L("ID",rx("[a-z_][a-z0-9_]*")),L("NUM",rx("[0-9]+")),L("WS",rx("[ \t\n]+"),"skip")],
  "cases":[
   {"input":"if iffy else","tokens":T(("IF","if"),("WS"," "),("ID","iffy"),("WS"," "),("ELSE","else"))},
   {"input":"x1 23\n","tokens":T(("ID","x1"),("WS"," "),("NUM","23"),("WS","\n"))},
   {"input":"12ab","tokens":T(("NUM","12"),("ID","ab"))},
   {"input":"a+b","error_at":1},
   {"input":"","tokens":[]},
   {"input":"if","allowed":["ID"],"tokens":T(("ID","if"))},
   {"input":"if x","allowed":["IF","ID"],"error_at":2},
   {"input":"el","allowed":["ELSE"],"error_at":2}]},
 {"name":"longest_match_no_backtracking","lexemes":[L("A",lit("a")),L("ABC",lit("abc")),L("B",lit("b"))],
  "cases":[
   {"input":"abcab","error_at":5},
   {"input":"abd","error_at":2},
   {"input":"aabc","tokens":T(("A","a"),("ABC","abc"))},
   {"input":"abcb","tokens":T(("ABC","abc"),("B","b"))}]},
 {"name":"no_extension_ends_with_byte","lexemes":[L("EQ",lit("=")),L("EQEQ",lit("==")),L("LP",lit("("))],
  "cases":[
   {"input":"===","tokens":T(("EQEQ","=="),("EQ","="))},
   {"input":"((=(","tokens":T(("LP","("),("LP","("),("EQ","="),("LP","("))}]},
 {"name":"byte_sets_and_repeats","lexemes":[
    L("D3",{"repeat":{"expr":{"byte_set":[[48,57]]},"min":2,"max":3}}),
    L("HEX",{"concat":[lit("0x"),{"repeat":{"expr":rx("[0-9a-f]"),"min":1,"max":None}}]}),
    L("X",{"or":[lit("x"),{"bytes":[121,122]}]})],
  "cases":[
   {"input":"12345","tokens":T(("D3","123"),("D3","45"))},
   {"input":"0x1f0","tokens":T(("HEX","0x1f0"))},
   {"input":"0xx","error_at":2},
   {"input":"xyz","tokens":T(("X","x"),("X","yz"))},
   {"input":"1","error_at":1}]},
 {"name":"unicode","lexemes":[L("WORD",rx(r"\p{L}+")),L("SP",rx(" "),"skip"),L("ANY",rx("."))],
  "cases":[
   {"input":"héllo wörld!","tokens":T(("WORD","héllo"),("SP"," "),("WORD","wörld"),("ANY","!"))},
   {"input":"日本 €","tokens":T(("WORD","日本"),("SP"," "),("ANY","€"))}]},
 {"name":"empty_and_nomatch","lexemes":[L("NONE",{"no_match":None} if False else "no_match"),L("E",{"or":[]}),L("A",{"concat":[lit("a"),"empty"]})],
  "cases":[
   {"input":"aa","tokens":T(("A","a"),("A","a"))},
   {"input":"b","error_at":0},
   {"input":"a","allowed":["NONE","E"],"error_at":0}]},
 {"name":"classes","lexemes":[L("X",lit("x"),None) | {"class":0},L("Y",lit("y")) | {"class":1}],
  "cases":[{"input":"xyx","tokens":T(("X","x"),("Y","y"),("X","x"))}]},
]

lazy=[
 {"name":"lazy_single","lexemes":[L("TEXT",rx("[a-z]+"),"lazy")],
  "cases":[{"input":"abc","tokens":T(("TEXT","a"),("TEXT","b"),("TEXT","c"))}]},
 {"name":"lazy_until_end_marker","lexemes":[L("BODY",rx("[a-zA-Z ]*END"),"lazy"),L("WORD",rx("[a-z]+"))],
  "cases":[
   {"input":"abENDcd END","allowed":["BODY"],"tokens":T(("BODY","abEND"),("BODY","cd END"))},
   {"input":"ab ENDx","allowed":["BODY"],"error_at":7},
   {"input":"abc","allowed":["WORD"],"tokens":T(("WORD","abc"))}]},
 {"name":"lazy_vs_greedy_same_text","lexemes":[L("G",rx("a+")),L("L",rx("b+"),"lazy")],
  "cases":[{"input":"aabb","tokens":T(("G","aa"),("L","b"),("L","b"))}]},
 {"name":"stop_lookahead","lexemes":[L("BODY",{"concat":[rx("[a-z ]*"),{"look_ahead":lit("STOP")}]},"lazy"),L("X",lit("x"))],
  "cases":[
   {"input":"ab cSTOPx","tokens":T(("BODY","ab c"),("X","x"))},
   {"input":"abSTO","error_at":5}]},
]

STRING=r'"(\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}|[^"\\\x00-\x1F])*"'
NUMBER=r'-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?'
jsonlex=[L("LBRACE",lit("{")),L("RBRACE",lit("}")),L("LBRACK",lit("[")),L("RBRACK",lit("]")),L("COLON",lit(":")),L("COMMA",lit(",")),
 L("STRING",rx(STRING)),L("NUMBER",rx(NUMBER)),L("TRUE",lit("true")),L("FALSE",lit("false")),L("NULL",lit("null")),L("WS",rx(r"[ \t\n\r]+"),"skip")]
json_=[
 {"name":"json","lexemes":jsonlex,"cases":[
   {"input":'{"a": [1, -2.5e3, true, null], "b\\"c": "\\u00e9x"}',
    "tokens":T(("LBRACE","{"),("STRING",'"a"'),("COLON",":"),("WS"," "),("LBRACK","["),("NUMBER","1"),("COMMA",","),("WS"," "),
      ("NUMBER","-2.5e3"),("COMMA",","),("WS"," "),("TRUE","true"),("COMMA",","),("WS"," "),("NULL","null"),("RBRACK","]"),("COMMA",","),("WS"," "),
      ("STRING",'"b\\"c"'),("COLON",":"),("WS"," "),("STRING",'"\\u00e9x"'),("RBRACE","}"))},
   {"input":"01","tokens":T(("NUMBER","0"),("NUMBER","1"))},
   {"input":"1.","error_at":2},
   {"input":"1.x","error_at":2},
   {"input":"tru","error_at":3},
   {"input":'"a\nb"',"error_at":2},
   {"input":'"\\x"',"error_at":2},
   {"input":'"é"',"tokens":T(("STRING",'"é"'))},
   {"input":"[1,2]","allowed":["LBRACK","NUMBER"],"error_at":2}]},
]

ident_not_kw={"and":[rx("[a-z]+"),{"not":{"or":[lit("if"),lit("else")]}}]}
anystar={"repeat":{"expr":{"byte_set":[[0,255]]},"min":0,"max":None}}
comment={"concat":[lit("/*"),{"not":{"concat":[anystar,lit("*/"),anystar]}},lit("*/")]}
extended=[
 {"name":"and_not_identifiers","lexemes":[L("ID",ident_not_kw),L("KW",{"or":[lit("if"),lit("else")]}),L("WS",rx(" +"),"skip")],
  "cases":[
   {"input":"if ifx else els","tokens":T(("KW","if"),("WS"," "),("ID","ifx"),("WS"," "),("KW","else"),("WS"," "),("ID","els"))},
   {"input":"if","allowed":["ID"],"error_at":2}]},
 {"name":"c_comment_by_complement","lexemes":[L("COMMENT",comment),L("ID",rx("[a-z]+"))],
  "cases":[
   {"input":"/* a * b */x","tokens":T(("COMMENT","/* a * b */"),("ID","x"))},
   {"input":"/* a */ b */","error_at":7}]},
 {"name":"empty_intersection_is_dead","lexemes":[L("AB",{"and":[rx("a+"),rx("b+")]})],
  "cases":[{"input":"a","error_at":0}]},
 {"name":"json_quote","lexemes":[L("STR",{"json_quote":{"expr":rx("[a-z\n]*")}}),L("RAW",{"json_quote":{"expr":rx("[0-9\"]+"),"raw":True}})],
  "cases":[
   {"input":'"ab\\ncd"',"allowed":["STR"],"tokens":T(("STR",'"ab\\ncd"'))},
   {"input":'"a\\t"',"allowed":["STR"],"error_at":3},
   {"input":'"a\nb"',"allowed":["STR"],"error_at":2},
   {"input":'1\\"2',"allowed":["RAW"],"tokens":T(("RAW",'1\\"2'))}]},
 {"name":"multiple_of","lexemes":[L("M5",{"multiple_of":{"divisor":5,"scale":0}}),L("SP",lit(" "),"skip")],
  "cases":[
   {"input":"15 10 0","tokens":T(("M5","15"),("SP"," "),("M5","10"),("SP"," "),("M5","0"))},
   {"input":"17","error_at":2}]},
]

errors=[
 {"name":"bad_regex","lexemes":[L("A",lit("a")),L("B",rx("(ab"))],"compile_error":"regex"},
 {"name":"repeat_min_gt_max","lexemes":[L("A",{"repeat":{"expr":lit("a"),"min":3,"max":2}})],"compile_error":"invalid_spec"},
 {"name":"lookahead_not_at_end","lexemes":[L("A",{"concat":[{"look_ahead":lit("a")},lit("b")]})],"compile_error":"invalid_spec"},
 {"name":"zero_divisor","lexemes":[L("A",{"multiple_of":{"divisor":0,"scale":0}})],"compile_error":"invalid_spec"},
 {"name":"empty_and","lexemes":[L("A",{"and":[]})],"compile_error":"invalid_spec"},
 {"name":"reversed_byte_range","lexemes":[L("A",{"byte_set":[[60,50]]})],"compile_error":"invalid_spec"},
]

forced=[
 {"name":"forced_keywords","lexemes":[L("TRUE",lit("true")),L("FALSE",lit("false")),L("FALSY",lit("falsy")),L("NULL",lit("null")),L("STRING",rx('"[a-z]*"'))],
  "cases":[
   {"input":"t","forced":"rue"},
   {"input":"","allowed":["NULL"],"forced":"null"},
   {"input":"","forced":""},
   {"input":"fa","forced":"ls"},
   {"input":"","allowed":["STRING"],"forced":"\""},
   {"input":"\"a","allowed":["STRING"],"forced":""}]},
]
for name,v in [("basic",basic),("lazy",lazy),("json",json_),("extended",extended),("errors",errors),("forced",forced)]:
    with open(os.path.join(D,name+".json"),"w") as f:
        d=lambda x: json.dumps(x,ensure_ascii=False)
        out=[]
        for suite in v:
            parts=['  "name": '+d(suite["name"])]
            parts.append('  "lexemes": [\n'+',\n'.join('    '+d(l) for l in suite["lexemes"])+'\n  ]')
            if "compile_error" in suite: parts.append('  "compile_error": '+d(suite["compile_error"]))
            if "cases" in suite: parts.append('  "cases": [\n'+',\n'.join('    '+d(c) for c in suite["cases"])+'\n  ]')
            out.append(' {\n'+',\n'.join(parts)+'\n }')
        f.write('[\n'+',\n'.join(out)+'\n]\n')
