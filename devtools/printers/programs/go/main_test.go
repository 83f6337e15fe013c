// go test's report of a test that panics: "--- FAIL: TestLoadShard", its t.Log lines, the panic, "FAIL".
package main

import "testing"

func TestLoadShard(t *testing.T) {
	t.Log("loading shard 3")
	mustLoad("/data/shard-00003.parquet")
}
