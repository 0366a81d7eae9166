namespace SieveQ.Policy.Tests;

/// <summary>Finds the repository and the shared schema folder from wherever the tests were built.</summary>
internal static class RepoPaths
{
    public static string Root { get; } = FindRoot();

    public static string PolicyTemplates => Path.Combine(Root, "installer", "policy");

    public static string Admx => Path.Combine(PolicyTemplates, "SieveQ.admx");

    public static string Adml => Path.Combine(PolicyTemplates, "en-US", "SieveQ.adml");

    /// <summary>
    /// ../shared/schemas/admx next to the repository. Missing is a failure, not a skip: a test that cannot
    /// find the schema has checked nothing and must not pass as if it had.
    /// </summary>
    public static string AdmxSchemas => SchemaFolder(Root);

    internal static string SchemaFolder(string repoRoot)
    {
        string dir = Path.GetFullPath(Path.Combine(repoRoot, "..", "shared", "schemas", "admx"));
        if (!File.Exists(Path.Combine(dir, "PolicyDefinitionFiles.xsd")))
        {
            throw new InvalidOperationException(
                $"the ADMX schema is not at {dir} (expected PolicyDefinitionFiles.xsd, PolicyDefinitions.xsd, BaseTypes.xsd there)");
        }
        return dir;
    }

    private static string FindRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "SieveQ.sln")))
            {
                return dir.FullName;
            }
        }
        throw new InvalidOperationException($"no folder above {AppContext.BaseDirectory} holds SieveQ.sln");
    }
}
