fn main() -> std::process::ExitCode {
    ralph_gate::main()
}
