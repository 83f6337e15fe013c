module example.com/golibs

go 1.23

require (
	github.com/pkg/errors v0.9.1
	github.com/rs/zerolog v1.35.1
	github.com/sirupsen/logrus v1.10.2
	go.uber.org/zap v1.28.0
	k8s.io/klog/v2 v2.140.0
)

require (
	github.com/go-logr/logr v1.4.1 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/sys v0.29.0 // indirect
)
