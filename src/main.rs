/// Every engine of tern-sim allocates small, short-lived values at each
/// step (frames, events, view parts, forked states), and the system
/// allocator's free lists were a fifth of an exploration's profile.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod pages;

fn main() -> std::process::ExitCode {
    tern_sim::cli::main()
}
