//! A tiny worker that reports its failures through the error and logging crates Rust services use:
//! `rustlibs SCENARIO`. Each scenario writes a known set of records (capture.py's RUSTLIB_SCENARIOS).
use std::io;

#[derive(Debug)]
struct ShardError {
    shard: u32,
    source: io::Error,
}

impl std::fmt::Display for ShardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "load shard {}", self.shard)
    }
}

impl std::error::Error for ShardError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

fn open_shard() -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::NotFound, "open /data/shard-00007.parquet: no such file or directory"))
}

fn load_shard() -> Result<(), ShardError> {
    open_shard().map_err(|source| ShardError { shard: 7, source })
}

fn anyhow_chain() -> anyhow::Result<()> {
    use anyhow::Context;
    load_shard().context("build dataset for epoch 3")?;
    Ok(())
}

fn eyre_chain() -> eyre::Result<()> {
    use eyre::WrapErr;
    load_shard().wrap_err("build dataset for epoch 3")?;
    Ok(())
}

fn main() {
    let scenario = std::env::args().nth(1).expect("scenario");
    match scenario.as_str() {
        "anyhow" => anyhow_main(),
        "anyhow_multiline" => anyhow_multiline(),
        "eyre" => eyre_main(),
        "color_eyre" | "color_eyre_color" => color_eyre_main(scenario.ends_with("_color")),
        "color_eyre_panic" => color_eyre_panic(),
        "env_logger" => env_logger_main(),
        "tracing_full" | "tracing_pretty" | "tracing_compact" => tracing_main(&scenario),
        "tokio_panic" => tokio_panic(),
        _ => {
            eprintln!("unknown scenario {scenario}");
            std::process::exit(2);
        }
    }
}

fn anyhow_main() {
    // `fn main() -> anyhow::Result<()>`: std prints "Error: {:?}" of the error the main returned
    let r: anyhow::Result<()> = anyhow_chain();
    if let Err(e) = r {
        eprintln!("Error: {e:?}");
        std::process::exit(1);
    }
}

fn anyhow_multiline() {
    let e = anyhow::anyhow!("config invalid:\n  lr: must be > 0\n  batch: must be a multiple of 8")
        .context("load /etc/train.toml");
    eprintln!("Error: {e:?}");
    std::process::exit(1);
}

fn eyre_main() {
    if let Err(e) = eyre_chain() {
        eprintln!("Error: {e:?}");
        std::process::exit(1);
    }
}

fn color_eyre_main(color: bool) {
    if color {
        color_eyre::install().unwrap();
    } else {
        // (the default theme writes colours whether or not stderr is a terminal; Theme::new() is the blank one)
        color_eyre::config::HookBuilder::default().theme(color_eyre::config::Theme::new()).install().unwrap();
    }
    if let Err(e) = eyre_chain() {
        eprintln!("Error: {e:?}");
        std::process::exit(1);
    }
}

fn color_eyre_panic() {
    color_eyre::config::HookBuilder::default().theme(color_eyre::config::Theme::new()).install().unwrap();
    let v: Vec<u32> = Vec::new();
    let _ = v.get(3).expect("rank table holds rank 3");
}

fn env_logger_main() {
    env_logger::Builder::new().filter_level(log::LevelFilter::Info).init();
    log::info!("epoch 3 starting");
    log::error!("config invalid:\n  lr: must be > 0\n  batch: must be a multiple of 8");
    log::warn!("shard load failed: {:?}", load_shard().unwrap_err());
    log::error!("dataset unavailable: {:?}", anyhow_chain().unwrap_err());
}

#[tracing::instrument(fields(epoch = 3))]
fn tracing_load(rank: u32) {
    tracing::info!(step = 1200, loss = 1.8342, "step done");
    let err = load_shard().unwrap_err();
    tracing::error!(error = ?err, "shard load failed");
    tracing::warn!(error = %anyhow_chain().unwrap_err(), "retrying");
    tracing::error!("config invalid:\n  lr: must be > 0");
}

fn tracing_main(scenario: &str) {
    let b = tracing_subscriber::fmt().with_writer(io::stderr).with_ansi(false);
    match scenario {
        "tracing_pretty" => b.pretty().init(),
        "tracing_compact" => b.compact().init(),
        _ => b.init(),
    }
    tracing_load(3);
}

fn tokio_panic() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let h = tokio::spawn(async {
            let v: Vec<u32> = Vec::new();
            v[3]
        });
        let r = h.await;
        eprintln!("[2026-12-01T17:44:06Z ERROR loader] rank task failed: {}", r.unwrap_err());
    });
}
