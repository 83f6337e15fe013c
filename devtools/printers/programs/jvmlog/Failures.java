// The failures both logging programs log: a cause chain, a suppressed exception, a message over
// lines (with a blank one), and a cause thrown in the JDK's own frames.
package org.example.train;

import java.io.IOException;

public final class Failures {
    private Failures() {}

    static final class CheckpointException extends RuntimeException {
        CheckpointException(String m, Throwable cause) { super(m, cause); }
    }

    static void read(int shard) throws IOException { throw new IOException("shard " + shard + ": unexpected end of stream"); }

    static void load(int shard) {
        try {
            read(shard);
        } catch (IOException e) {
            throw new CheckpointException("cannot restore /ckpt/step_1200", e);
        }
    }

    /** The throwable of one scenario. */
    static Throwable of(String scenario) {
        try {
            switch (scenario) {
                case "caused_by": load(7); break;
                case "suppressed": {
                    IllegalStateException e = new IllegalStateException("writer failed");
                    e.addSuppressed(new IOException("close: broken pipe"));
                    throw e;
                }
                case "multiline": throw new IllegalArgumentException("bad config:\n  tp_size=4\n\n  world_size=6");
                case "jdk_frames": {  // frames of the JDK's own modules (log4j2: "~[?:?]")
                    try {
                        Integer.parseInt(System.getProperty("train.steps", "ten"));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("bad value for train.max_steps", e);
                    }
                    break;
                }
                default: throw new UnsupportedOperationException(scenario);
            }
        } catch (RuntimeException e) {
            return e;
        }
        return null;
    }
}
