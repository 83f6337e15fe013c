package sluice.analysis;

import java.util.regex.Pattern;

import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.pattern.PatternCaptureGroupTokenFilter;
import org.elasticsearch.plugin.Inject;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.TokenFilterFactory;

/** Emits every capture group of every pattern as a token (the original too, when asked). */
@NamedComponent("pattern_capture")
public class PatternCaptureFilterFactory implements TokenFilterFactory {
    private final Pattern[] patterns;
    private final boolean preserveOriginal;

    @Inject
    public PatternCaptureFilterFactory(PatternCaptureSettings settings) {
        this.patterns = settings.patterns().stream().map(Pattern::compile).toArray(Pattern[]::new);
        this.preserveOriginal = settings.preserveOriginal();
    }

    @Override
    public TokenStream create(TokenStream input) {
        return new PatternCaptureGroupTokenFilter(input, preserveOriginal, patterns);
    }
}
