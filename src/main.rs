fn main() -> std::process::ExitCode {
    tern_sim::cli::main()
}
