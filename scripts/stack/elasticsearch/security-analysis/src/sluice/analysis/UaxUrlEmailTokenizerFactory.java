package sluice.analysis;

import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.email.UAX29URLEmailTokenizer;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.TokenizerFactory;

/** Unicode word boundaries that keep URLs and e-mail addresses whole. */
@NamedComponent("uax_url_email")
public class UaxUrlEmailTokenizerFactory implements TokenizerFactory {
    @Override
    public Tokenizer create() {
        return new UAX29URLEmailTokenizer();
    }
}
