// log4j2 (log4j-core) with a PatternLayout "%d %-5p [%t] %c - %m%n%xEx": the record, then the
// throwable with log4j's extended frames ("~[jar:version]", "[?:?]"): `Log4j2Worker SCENARIO`.
package org.example.train;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilder;
import org.apache.logging.log4j.core.config.builder.api.ConfigurationBuilderFactory;
import org.apache.logging.log4j.core.config.builder.impl.BuiltConfiguration;

public class Log4j2Worker {
    public static void main(String[] args) {
        String pattern = args.length > 1 ? args[1] : "%d %-5p [%t] %c - %m%n%xEx";
        ConfigurationBuilder<BuiltConfiguration> b = ConfigurationBuilderFactory.newConfigurationBuilder();
        b.add(b.newAppender("err", "Console").addAttribute("target", "SYSTEM_ERR")
                .add(b.newLayout("PatternLayout").addAttribute("pattern", pattern)));
        b.add(b.newRootLogger(Level.INFO).add(b.newAppenderRef("err")));
        Configurator.initialize(b.build());
        Logger log = LogManager.getLogger("org.example.train.Trainer");
        String s = args.length > 0 ? args[0] : "caused_by";
        log.info("restoring checkpoint");
        log.error("step 1200 failed", Failures.of(s));
    }
}
