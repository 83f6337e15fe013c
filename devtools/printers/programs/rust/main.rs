// A tiny loader whose panics the Rust standard library itself prints (std/src/panicking.rs,
// std/src/backtrace): `loader SCENARIO`; RUST_BACKTRACE is set by the caller.
use std::collections::HashMap;
use std::thread;

fn parse_step(s: &str) -> u64 {
    s.parse::<u64>().unwrap()
}

fn load_config(path: &str) -> HashMap<String, String> {
    let text = std::fs::read_to_string(path).expect("failed to read the training config");
    text.lines().map(|l| (l.to_string(), String::new())).collect()
}

fn shard_index(shards: &[u32], i: usize) -> u32 {
    shards[i]
}

fn main() {
    let scenario = std::env::args().nth(1).unwrap_or_default();
    match scenario.as_str() {
        "panic" => panic!("gradient norm is NaN at step {}", 1200),
        "unwrap" => {
            parse_step("12oo");
        }
        "expect" => {
            load_config("/etc/trainer/missing.toml");
        }
        "index" => {
            let shards = vec![1, 2, 3];
            let i = std::env::args().count() + 7;
            println!("{}", shard_index(&shards, i));
        }
        "multiline" => panic!("invalid config:\n  lr must be > 0\n  batch must be > 0"),
        "thread" => {
            let h = thread::Builder::new()
                .name("prefetch-1".into())
                .spawn(|| {
                    parse_step("-1");
                })
                .unwrap();
            let _ = h.join();
        }
        "thread_unnamed" => {
            let h = thread::spawn(|| {
                let v: Vec<u8> = Vec::new();
                v[0]
            });
            let _ = h.join();
        }
        "double" => {
            // a panic while unwinding from a panic: the runtime aborts
            struct Guard;
            impl Drop for Guard {
                fn drop(&mut self) {
                    panic!("failed to release the NCCL communicator");
                }
            }
            let _g = Guard;
            panic!("loss is NaN at step {}", 1200);
        }
        _ => std::process::exit(64),
    }
}
