package sluice.analysis;

import java.util.List;

import org.elasticsearch.plugin.settings.AnalysisSettings;
import org.elasticsearch.plugin.settings.BooleanSetting;
import org.elasticsearch.plugin.settings.ListSetting;

/** The settings of a pattern_capture filter, as analysis-common reads them. */
@AnalysisSettings
public interface PatternCaptureSettings {
    @ListSetting(path = "patterns")
    List<String> patterns();

    @BooleanSetting(path = "preserve_original", defaultValue = true)
    boolean preserveOriginal();
}
