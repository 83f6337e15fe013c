// A tiny worker that logs its failures through the logging and error libraries Go services use:
// `golibs SCENARIO`. Each scenario writes a known set of records (see capture.py's GOLIB_SCENARIOS):
// an INFO record, then the failure as the library prints it, to stderr.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	pkgerrors "github.com/pkg/errors"
	"github.com/rs/zerolog"
	zlerrors "github.com/rs/zerolog/pkgerrors"
	"github.com/sirupsen/logrus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
)

func openShard(path string) error {
	return pkgerrors.New("open " + path + ": no such file or directory")
}

func loadShard(path string) error {
	return pkgerrors.Wrap(openShard(path), "load shard 7")
}

func plainErr() error { return fmt.Errorf("load shard 7: %w", errors.New("open /data/shard-00007.parquet: no such file or directory")) }

// zap's console encoder for a developer's config, to stderr (zap.NewDevelopment without the file sync)
func zapDev() *zap.Logger {
	l, err := zap.NewDevelopment()
	if err != nil {
		panic(err)
	}
	return l
}

func zapProd() *zap.Logger {
	l, err := zap.NewProduction()
	if err != nil {
		panic(err)
	}
	return l
}

func step(l *zap.Logger) { l.Info("step done", zap.Int("step", 1200), zap.Float64("loss", 1.8342)) }

func logrusLogger() *logrus.Logger {
	l := logrus.New()
	l.Out = os.Stderr
	l.Formatter = &logrus.TextFormatter{DisableColors: true, FullTimestamp: true}
	return l
}

// klog's flags after the scenario: `golibs klog_fatal -logtostderr=false -alsologtostderr -log_dir=DIR`
func klogFlags() {
	klog.InitFlags(nil)
	if err := flag.CommandLine.Parse(os.Args[2:]); err != nil {
		panic(err)
	}
}

func main() {
	scenario := os.Args[1]
	switch scenario {
	case "zap_dev_error":
		l := zapDev()
		step(l)
		l.Error("checkpoint save failed", zap.Error(plainErr()), zap.String("path", "/ckpt/step_1200"))
	case "zap_dev_pkgerrors":
		l := zapDev()
		step(l)
		l.Error("shard load failed", zap.Error(loadShard("/data/shard-00007.parquet")))
	case "zap_dev_warn_multiline":
		l := zapDev()
		step(l)
		l.Warn("config invalid:\n  lr: must be > 0\n  batch: must be a multiple of 8")
	case "zap_dev_dpanic":
		l := zapDev()
		step(l)
		l.DPanic("rank table inconsistent", zap.Int("rank", 3))
	case "zap_prod_error":
		l := zapProd()
		step(l)
		l.Error("shard load failed", zap.Error(loadShard("/data/shard-00007.parquet")))
	case "zap_prod_panic":
		l := zapProd()
		step(l)
		l.Panic("rank table inconsistent", zap.Int("rank", 3))
	case "zap_sugar_error":
		l := zapDev().Sugar()
		l.Infow("step done", "step", 1200)
		l.Errorw("checkpoint save failed", "error", plainErr())
	case "logrus_error":
		l := logrusLogger()
		l.WithField("step", 1200).Info("step done")
		l.WithError(plainErr()).WithField("path", "/ckpt/step_1200").Error("checkpoint save failed")
	case "logrus_multiline":
		l := logrusLogger()
		l.WithField("step", 1200).Info("step done")
		l.Error("config invalid:\n  lr: must be > 0\n  batch: must be a multiple of 8")
	case "logrus_json":
		l := logrusLogger()
		l.Formatter = &logrus.JSONFormatter{}
		l.WithField("step", 1200).Info("step done")
		l.WithError(loadShard("/data/shard-00007.parquet")).Error("shard load failed")
	case "logrus_panic":
		l := logrusLogger()
		l.WithField("step", 1200).Info("step done")
		l.WithField("rank", 3).Panic("rank table inconsistent")
	case "zerolog_console":
		zerolog.ErrorStackMarshaler = zlerrors.MarshalStack
		zerolog.TimeFieldFormat = time.RFC3339Nano
		l := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, NoColor: true}).With().Timestamp().Logger()
		l.Info().Int("step", 1200).Msg("step done")
		l.Error().Stack().Err(loadShard("/data/shard-00007.parquet")).Msg("shard load failed")
	case "zerolog_json":
		zerolog.ErrorStackMarshaler = zlerrors.MarshalStack
		l := zerolog.New(os.Stderr).With().Timestamp().Logger()
		l.Info().Int("step", 1200).Msg("step done")
		l.Error().Stack().Err(loadShard("/data/shard-00007.parquet")).Msg("shard load failed")
	case "klog_errors":
		klogFlags()
		klog.InfoS("step done", "step", 1200, "loss", 1.8342)
		klog.ErrorS(plainErr(), "checkpoint save failed", "path", "/ckpt/step_1200")
		klog.Flush()
	case "klog_multiline":
		klogFlags()
		klog.InfoS("step done", "step", 1200)
		cfg, _ := json.MarshalIndent(map[string]any{"lr": 0.0003, "batch": 8, "warmup": 100}, "", "  ")
		klog.InfoS("loaded config", "path", "/etc/train.json", "config", string(cfg))
		klog.ErrorS(errors.New("nccl timeout\nrank 3 did not answer"), "allreduce failed", "step", 1200)
		klog.Flush()
	case "klog_fatal":
		klogFlags()
		klog.InfoS("step done", "step", 1200)
		go func() { time.Sleep(time.Hour) }()
		time.Sleep(10 * time.Millisecond)
		klog.Fatalf("cannot reach rendezvous %s: %v", "10.0.0.2:29500", plainErr())
	case "slog_text":
		l := slog.New(slog.NewTextHandler(os.Stderr, nil))
		l.Info("step done", "step", 1200)
		l.Error("config invalid:\n  lr: must be > 0", "err", loadShard("/data/shard-00007.parquet"))
	case "slog_json":
		l := slog.New(slog.NewJSONHandler(os.Stderr, nil))
		l.Info("step done", "step", 1200)
		l.Error("config invalid:\n  lr: must be > 0", "err", loadShard("/data/shard-00007.parquet"))
	case "pkgerrors_log":
		log.Printf("step %d done", 1200)
		log.Printf("shard load failed: %+v", loadShard("/data/shard-00007.parquet"))
	case "pkgerrors_withstack":
		log.Printf("step %d done", 1200)
		err := pkgerrors.WithStack(plainErr())
		log.Printf("%+v", err)
	default:
		fmt.Fprintln(os.Stderr, "unknown scenario", scenario)
		os.Exit(2)
	}
	_ = zapcore.DebugLevel
}
