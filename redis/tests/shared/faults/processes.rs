//! Several OS processes sharing one limit through the fault proxy: this test binary runs itself
//! again as each child process.
