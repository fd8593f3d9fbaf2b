//! The terminals of Lark's `common` library, as regexes (written for this crate).

/// `(name, regex)` for every terminal `%import common.NAME` accepts.
pub(crate) const COMMON: &[(&str, &str)] = &[
    ("DIGIT", r"[0-9]"),
    ("HEXDIGIT", r"[a-fA-F0-9]"),
    ("INT", r"[0-9]+"),
    ("SIGNED_INT", r"[+-]?[0-9]+"),
    ("DECIMAL", r"[0-9]+\.[0-9]*|\.[0-9]+"),
    ("_EXP", r"[eE][+-]?[0-9]+"),
    ("FLOAT", r"[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"),
    (
        "SIGNED_FLOAT",
        r"[+-]?(?:[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)",
    ),
    ("NUMBER", r"[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+"),
    (
        "SIGNED_NUMBER",
        r"[+-]?(?:[0-9]+[eE][+-]?[0-9]+|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[0-9]+)",
    ),
    ("_STRING_INNER", r"[^\n]*"),
    ("_STRING_ESC_INNER", r#"(?:[^"\\\n]|\\.)*"#),
    ("ESCAPED_STRING", r#""(?:[^"\\\n]|\\.)*""#),
    ("LCASE_LETTER", r"[a-z]"),
    ("UCASE_LETTER", r"[A-Z]"),
    ("LETTER", r"[A-Za-z]"),
    ("WORD", r"[A-Za-z]+"),
    ("CNAME", r"[_A-Za-z][_A-Za-z0-9]*"),
    ("WS_INLINE", r"[ \t]+"),
    ("WS", r"[ \t\x0C\r\n]+"),
    ("CR", r"\r"),
    ("LF", r"\n"),
    ("NEWLINE", r"(?:\r?\n)+"),
    ("SH_COMMENT", r"#[^\n]*"),
    ("CPP_COMMENT", r"//[^\n]*"),
    ("C_COMMENT", r"/\*(?:[^*]|\*+[^*/])*\*+/"),
    ("SQL_COMMENT", r"--[^\n]*"),
];

/// The regex of common terminal `name`.
pub(crate) fn lookup(name: &str) -> Option<&'static str> {
    COMMON.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}
