pub mod adversarial;
