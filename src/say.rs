//! `println!`, `print!`, `eprintln!` and `eprint!` that never panic.
//!
//! The standard ones panic when their stream is gone ("failed printing to stderr: Broken
//! pipe"), as it is when headroom's output is piped into `head` or its terminal closes
//! mid-run. A load test must still store its run, write its report files and exit with its
//! own status, so a line that cannot be shown is dropped instead. Declared before every other
//! module (`#[macro_use]`, in the library and the binary alike), these shadow the standard
//! macros in the whole crate: a new `eprintln!` is safe without anyone thinking of it.
#![allow(unused_macros)]

macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

macro_rules! print {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}
