namespace SieveQ.Policy.Hosting;

/// <summary>One-off reads of a policy file, for the CLI's checks.</summary>
public static class PolicyFiles
{
    /// <summary>Reads and judges a JSON mirror file once, without watching it; a missing file is an error here.</summary>
    public static PolicyEvaluation EvaluateFile(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        using var source = new JsonFilePolicySource(path);
        if (!File.Exists(source.FullPath))
        {
            return new PolicyEvaluation(source.Name, "missing", null, [$"{source.FullPath}: no such file"], []);
        }
        return PolicyLoader.Evaluate(source.Read());
    }
}
