#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ralph_gate::fuzzing::hook_input(data));
