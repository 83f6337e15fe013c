package sluice.analysis;

import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.TokenStream;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.TokenFilterFactory;

@NamedComponent("lowercase")
public class LowercaseFilterFactory implements TokenFilterFactory {
    @Override
    public TokenStream create(TokenStream input) {
        return new LowerCaseFilter(input);
    }

    @Override
    public TokenStream normalize(TokenStream input) {
        return new LowerCaseFilter(input);
    }
}
