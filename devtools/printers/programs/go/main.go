// A tiny worker whose crashes the Go runtime itself prints: `crash SCENARIO`.
// Each scenario ends the process with one runtime dump on stderr (runtime/panic.go,
// runtime/traceback.go); GOTRACEBACK is set by the caller.
package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"
)

type shard struct{ rows map[string]int }

func (s *shard) add(k string) { s.rows[k]++ }

func loadShard(path string) error { return fmt.Errorf("open %s: no such file or directory", path) }

func mustLoad(path string) {
	if err := loadShard(path); err != nil {
		panic(err)
	}
}

func recoverAndRepanic() {
	defer func() {
		if r := recover(); r != nil {
			panic(r)
		}
	}()
	mustLoad("/data/shard-00007.parquet")
}

func worker(id int, wg *sync.WaitGroup) {
	defer wg.Done()
	var s *shard
	if id == 2 {
		s.add("x")
	}
	time.Sleep(time.Second)
}

func depth(n int) int { return depth(n+1) + 1 }

func main() {
	switch os.Args[1] {
	case "plain":
		mustLoad("/data/shard-00003.parquet")
	case "errors_new":
		panic(errors.New("checkpoint step_1200 is corrupt"))
	case "multiline":
		panic(fmt.Sprintf("config invalid:\n  lr: must be > 0\n  batch: must be a multiple of 8"))
	case "repanic":
		recoverAndRepanic()
	case "nil_pointer":
		var s *shard
		s.add("rows")
	case "index":
		xs := []int{1, 2, 3}
		i := len(os.Args) + 5
		fmt.Println(xs[i])
	case "nil_map":
		var m map[string]int
		m["step"] = 1
	case "goroutines":
		var wg sync.WaitGroup
		for i := 0; i < 3; i++ {
			wg.Add(1)
			go worker(i, &wg)
		}
		wg.Wait()
	case "deadlock":
		ch := make(chan int)
		<-ch
	case "deadlock_wg":
		var wg sync.WaitGroup
		wg.Add(1)
		wg.Wait()
	case "concurrent_map":
		m := map[int]int{}
		for i := 0; i < 8; i++ {
			go func() {
				for j := 0; ; j++ {
					m[j%100] = j
				}
			}()
		}
		time.Sleep(5 * time.Second)
	case "race":
		// the race detector's report (build with -race): two goroutines write one variable
		step := 0
		var wg sync.WaitGroup
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				step++
			}()
		}
		wg.Wait()
		fmt.Fprintln(os.Stderr, "steps:", step)
	case "log_panic":
		// the log package writes the record, then panics with its text
		log.Panicf("rank %d: loss is NaN at step %d", 3, 1200)
	case "stack_overflow":
		fmt.Println(depth(0))
	case "hang":
		// a worker stuck on a channel: the caller sends SIGQUIT, and the runtime dumps every goroutine and
		// the registers (runtime/signal_unix.go sighandler)
		ch := make(chan int)
		go func() { <-ch }()
		fmt.Fprintln(os.Stderr, "worker waiting for shards")
		time.Sleep(60 * time.Second)
	case "custom_error":
		panic(fmt.Errorf("rank %d: %w", 3, errors.New("NCCL timeout after 1800s")))
	default:
		fmt.Fprintln(os.Stderr, "unknown scenario")
		os.Exit(64)
	}
}
