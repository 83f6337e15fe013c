// logback-classic with a PatternLayout "%d %-5level [%thread] %logger - %msg%n" (logback appends the
// throwable itself, ThrowableProxyConverter: "... N common frames omitted"): `LogbackWorker SCENARIO`.
package org.example.train;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import org.slf4j.LoggerFactory;

public class LogbackWorker {
    public static void main(String[] args) {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        ctx.reset();
        PatternLayoutEncoder enc = new PatternLayoutEncoder();
        enc.setContext(ctx);
        enc.setPattern(args.length > 1 ? args[1] : "%d %-5level [%thread] %logger - %msg%n");
        enc.start();
        ConsoleAppender<ILoggingEvent> app = new ConsoleAppender<>();
        app.setContext(ctx);
        app.setTarget("System.err");
        app.setEncoder(enc);
        app.start();
        Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.INFO);
        root.addAppender(app);
        org.slf4j.Logger log = LoggerFactory.getLogger("org.example.train.Trainer");
        String s = args.length > 0 ? args[0] : "caused_by";
        log.info("restoring checkpoint");
        log.error("step 1200 failed", Failures.of(s));
    }
}
