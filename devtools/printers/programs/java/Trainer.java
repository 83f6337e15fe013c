// A tiny service whose failures the JDK itself prints: `java Trainer SCENARIO`.
// Each scenario writes one event to stderr through Throwable.printStackTrace, the default
// uncaught-exception handler, java.util.logging's SimpleFormatter, or PatternLayoutLike (a
// formatter written here after log4j/logback's "%d %p %c - %m%n%ex", which prints the stack
// with printStackTrace, as those layouts do).
import java.io.PrintWriter;
import java.io.StringWriter;
import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.logging.Level;
import java.util.logging.Logger;

public class Trainer {
    static class CheckpointException extends RuntimeException {
        CheckpointException(String m, Throwable cause) { super(m, cause); }
    }

    static class Shard implements AutoCloseable {
        final int id;
        Shard(int id) { this.id = id; }
        void read() throws java.io.IOException { throw new java.io.IOException("shard " + id + ": unexpected end of stream"); }
        @Override public void close() { throw new IllegalStateException("shard " + id + " already closed"); }
    }

    static class Config {
        static final int STEPS = Integer.parseInt(System.getProperty("train.steps", "ten"));
    }

    static int parse(String s) { return Integer.parseInt(s); }
    static int readStep(String s) { return parse(s) + 1; }
    static void loadConfig(String value) {
        try {
            readStep(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad value for train.max_steps", e);
        }
    }
    static void restore(String value) {
        try {
            loadConfig(value);
        } catch (IllegalArgumentException e) {
            throw new CheckpointException("cannot restore checkpoint /ckpt/step_1200", e);
        }
    }
    static void readShard() throws Exception {
        try (Shard s = new Shard(3)) {
            s.read();
        }
    }
    static void multiline() {
        throw new IllegalStateException("Job failed with 2 errors:\n  task 7: OOM\n\n  task 9: lost executor");
    }

    /** log4j/logback PatternLayout "%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %c - %m%n%ex". */
    static String patternLayout(String level, String logger, String msg, Throwable t) {
        StringWriter sw = new StringWriter();
        PrintWriter pw = new PrintWriter(sw);
        pw.print(new SimpleDateFormat("yyyy-MM-dd HH:mm:ss,SSS").format(new Date()) + " "
                 + String.format("%-5s", level) + " " + logger + " - " + msg + System.lineSeparator());
        t.printStackTrace(pw);
        pw.flush();
        return sw.toString();
    }

    /** logback's default "%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n". */
    static String logbackLayout(String level, String logger, String msg, Throwable t) {
        StringWriter sw = new StringWriter();
        PrintWriter pw = new PrintWriter(sw);
        pw.print(new SimpleDateFormat("HH:mm:ss.SSS").format(new Date()) + " [" + Thread.currentThread().getName() + "] "
                 + String.format("%-5s", level) + " " + logger + " - " + msg + System.lineSeparator());
        t.printStackTrace(pw);
        pw.flush();
        return sw.toString();
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "caused_by":
                try { restore("12oo"); } catch (RuntimeException e) { e.printStackTrace(); }
                break;
            case "suppressed":
                try { readShard(); } catch (Exception e) { e.printStackTrace(); }
                break;
            case "multiline":
                try { multiline(); } catch (RuntimeException e) { e.printStackTrace(); }
                break;
            case "multiline_cause":
                try { multiline(); } catch (RuntimeException e) {
                    new RuntimeException("stage 3 aborted", e).printStackTrace();
                }
                break;
            case "uncaught_main":
                restore("x");
                break;
            case "uncaught_thread": {
                Thread t = new Thread(() -> restore("-"), "data-loader-2");
                t.start();
                t.join();
                break;
            }
            case "jul": {
                Logger log = Logger.getLogger("org.example.train.Trainer");
                try { restore("1e3"); } catch (RuntimeException e) { log.log(Level.SEVERE, "step failed", e); }
                break;
            }
            case "jul_warning": {
                Logger log = Logger.getLogger("org.example.train.Loader");
                try { readShard(); } catch (Exception e) { log.log(Level.WARNING, "retrying shard", e); }
                break;
            }
            case "pattern":
                try { restore("12oo"); } catch (RuntimeException e) {
                    System.err.print(patternLayout("ERROR", "org.example.train.Trainer", "Failed to restore checkpoint", e));
                }
                break;
            case "pattern_multiline":
                try { multiline(); } catch (RuntimeException e) {
                    System.err.print(patternLayout("WARN", "org.example.train.Scheduler", "job 42 failed", e));
                }
                break;
            case "logback":
                try { readShard(); } catch (Exception e) {
                    System.err.print(logbackLayout("ERROR", "o.e.train.ShardReader", "read failed", e));
                }
                break;
            case "initializer":
                System.out.println(Config.STEPS);
                break;
            case "no_message":
                try { restore(null); } catch (RuntimeException e) { new IllegalStateException(e).printStackTrace(); }
                break;
            case "dump_stack":
                Thread.dumpStack();
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
