//! Small pages for `tern-sim agent`.
//!
//! The allocator asks the kernel for transparent huge pages, which makes
//! the harness's long runs about a fifth faster. An agent process is the
//! opposite case: a run over the protocol starts one at every crash and
//! every new session, each lives a few milliseconds, and the first touch of
//! each 2 MiB region zeroes all of it. That zeroing was a fifth of the
//! agents' CPU time in `certify` over the protocol.
//!
//! The allocator's first allocation comes before `main` (the runtime names
//! the main thread), so the choice is made earlier still, in a function
//! the C runtime calls before it: `PR_SET_THP_DISABLE` for the process, set
//! only when an argument is `agent`. Reading the subcommand this loosely
//! can only cost speed: another command with an argument `agent` runs on
//! small pages, and nothing else changes. glibc passes the arguments to
//! these functions; other C runtimes do not, so the function exists only
//! there.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[used]
#[link_section = ".init_array"]
static SMALL_PAGES_FOR_AGENT: extern "C" fn(
    libc::c_int,
    *const *const libc::c_char,
    *const *const libc::c_char,
) = small_pages_for_agent;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn small_pages_for_agent(
    argc: libc::c_int,
    argv: *const *const libc::c_char,
    _env: *const *const libc::c_char,
) {
    if argv.is_null() {
        return;
    }
    let count = usize::try_from(argc).unwrap_or(0);
    // SAFETY: glibc calls `.init_array` functions with the process's argc
    // and argv, whose first `argc` entries are NUL-terminated strings.
    let agent = (1..count).any(|i| unsafe {
        let arg = *argv.add(i);
        !arg.is_null() && std::ffi::CStr::from_ptr(arg).to_bytes() == b"agent"
    });
    if agent {
        // SAFETY: the call only sets a flag of this process; it fails
        // harmlessly on kernels without it.
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
    }
}
