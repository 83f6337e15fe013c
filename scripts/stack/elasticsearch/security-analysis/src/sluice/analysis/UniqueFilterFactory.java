package sluice.analysis;

import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.miscellaneous.RemoveDuplicatesTokenFilter;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.TokenFilterFactory;

/** Drops a token equal to one already emitted at the same position (see README.md). */
@NamedComponent("unique")
public class UniqueFilterFactory implements TokenFilterFactory {
    @Override
    public TokenStream create(TokenStream input) {
        return new RemoveDuplicatesTokenFilter(input);
    }
}
