#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ralph_gate::fuzzing::stop_decision(data));
