using System.Xml.Linq;

namespace SieveQ.Cli.Tests;

/// <summary>
/// The project graph of docs/architecture.md, checked against every src .csproj (bft-replica/, service/, sdk/, admin-ui/):
/// a reference or package not in the table fails, so a new dependency is a decision written here, not an
/// accident. In particular the pure projects (deterministic; no disk, clock or environment) reference only
/// pure projects and no package that does I/O, and the SDK's closure holds no replica, deployment or rules code.
/// </summary>
public sealed class ProjectDependencyTests
{
    /// <summary>Deterministic classes only: what every replica must compute alike, and what the fuzzers instrument.</summary>
    private static readonly HashSet<string> Pure = ["SieveQ.Bft", "SieveQ.Sieve", "SieveQ.Policy", "SieveQ.Protocol"];

    /// <summary>Project → the projects it may reference directly.</summary>
    private static readonly Dictionary<string, string[]> AllowedProjects = new()
    {
        ["SieveQ.Bft"] = [],
        ["SieveQ.Sieve"] = ["SieveQ.Bft"],
        ["SieveQ.Policy"] = [],
        ["SieveQ.Protocol"] = [],
        ["SieveQ.Rules"] = ["SieveQ.Sieve"],
        ["SieveQ.Bft.Simulation"] = ["SieveQ.Bft"],
        ["SieveQ.Bft.Hosting"] = ["SieveQ.Bft", "SieveQ.Transport"],
        ["SieveQ.Sieve.Hosting"] = ["SieveQ.Sieve"],
        ["SieveQ.Transport"] = [],
        ["SieveQ.Transport.Server"] = ["SieveQ.Transport"],
        ["SieveQ.Policy.Hosting"] = ["SieveQ.Policy"],
        ["SieveQ.Firewall"] = ["SieveQ.Policy", "SieveQ.Policy.Hosting"],
        ["SieveQ.Sdk"] = ["SieveQ.Sieve", "SieveQ.Sieve.Hosting", "SieveQ.Protocol", "SieveQ.Transport"],
        ["SieveQ.Deployment"] = ["SieveQ.Sieve", "SieveQ.Sieve.Hosting", "SieveQ.Rules", "SieveQ.Bft.Hosting", "SieveQ.Protocol", "SieveQ.Transport"],
        ["SieveQ.PreSq"] = ["SieveQ.Sieve", "SieveQ.Sieve.Hosting", "SieveQ.Deployment", "SieveQ.Protocol", "SieveQ.Transport", "SieveQ.Transport.Server", "SieveQ.Bft.Hosting"],
        ["SieveQ.ReplicaSq"] = ["SieveQ.Bft.Hosting", "SieveQ.Sieve", "SieveQ.Sieve.Hosting", "SieveQ.Deployment", "SieveQ.Rules", "SieveQ.Protocol", "SieveQ.Transport", "SieveQ.Transport.Server", "SieveQ.Controller"],
        ["SieveQ.Agent"] = ["SieveQ.Sdk", "SieveQ.Deployment", "SieveQ.Firewall", "SieveQ.Transport.Server"],
        ["SieveQ.Controller"] = ["SieveQ.Deployment", "SieveQ.Protocol", "SieveQ.Transport", "SieveQ.Transport.Server"],
        ["SieveQ.Telemetry"] = [],
        // Builds from the SieveQ.Sdk package (sdk/check.sh), never from the projects.
        ["SieveQ.Sdk.Sample"] = [],
        ["SieveQ.Cli"] =
        [
            "SieveQ.Bft", "SieveQ.Bft.Simulation", "SieveQ.Bft.Hosting", "SieveQ.ReplicaSq", "SieveQ.Firewall", "SieveQ.Policy", "SieveQ.Policy.Hosting",
            "SieveQ.PreSq", "SieveQ.Deployment", "SieveQ.Sieve.Hosting", "SieveQ.Rules", "SieveQ.Agent", "SieveQ.Controller", "SieveQ.Telemetry",
            // Build order only (ReferenceOutputAssembly=false): the console is its own process, copied beside sieveq.
            "SieveQ.AdminUi",
        ],
        ["SieveQ.AdminUi"] = ["SieveQ.Controller", "SieveQ.Deployment", "SieveQ.Transport", "SieveQ.Transport.Server"],
    };

    /// <summary>
    /// Project → the NuGet packages it may reference. Pure projects get only data and interface packages: protobuf
    /// messages, the protobuf code generator (build time only) and the logging abstractions.
    /// </summary>
    private static readonly Dictionary<string, string[]> AllowedPackages = new()
    {
        ["SieveQ.Policy.Hosting"] = ["Microsoft.Extensions.Logging.Abstractions"],
        ["SieveQ.Protocol"] = ["Google.Protobuf", "Grpc.Tools"],
        ["SieveQ.Transport"] = ["Google.Protobuf"],
        ["SieveQ.Transport.Server"] = ["Google.Protobuf"],
        ["SieveQ.Sdk"] = ["Microsoft.Extensions.Logging.Console", "Microsoft.CodeAnalysis.PublicApiAnalyzers"],
        ["SieveQ.Sdk.Sample"] = ["SieveQ.Sdk"],
        ["SieveQ.Firewall"] = ["Microsoft.Extensions.Logging.Abstractions"],
        ["SieveQ.AdminUi"] = ["MudBlazor", "System.CommandLine", "Microsoft.Extensions.Hosting.Systemd", "Microsoft.Extensions.Hosting.WindowsServices", "Microsoft.AspNetCore.Authentication.OpenIdConnect", "MailKit"],
        ["SieveQ.Controller"] = ["System.ServiceProcess.ServiceController"],
        ["SieveQ.Telemetry"] = ["OpenTelemetry.Extensions.Hosting", "OpenTelemetry.Exporter.OpenTelemetryProtocol", "OpenTelemetry.Exporter.Prometheus.AspNetCore"],
        ["SieveQ.Cli"] = ["System.CommandLine", "ScottPlot", "Microsoft.Extensions.Hosting.Systemd", "Microsoft.Extensions.Hosting.WindowsServices", "Microsoft.Extensions.Logging.EventLog"],
    };

    /// <summary>What a client application must not get with the SDK: the replica host, the WAL, the rules engine, deployment tooling, the Kestrel server.</summary>
    private static readonly string[] NotForClients = ["SieveQ.Deployment", "SieveQ.Bft.Hosting", "SieveQ.ReplicaSq", "SieveQ.Rules", "SieveQ.Transport.Server"];

    private sealed record ProjectFile(string Name, string Path, IReadOnlyList<string> Projects, IReadOnlyList<string> Packages, IReadOnlyList<string> Frameworks);

    [Fact]
    public void Every_src_project_references_only_what_the_table_allows()
    {
        var projects = SrcProjects();
        Assert.NotEmpty(projects);
        var problems = new List<string>();
        foreach (var p in projects.Values)
        {
            if (!AllowedProjects.TryGetValue(p.Name, out var allowed))
            {
                problems.Add($"{p.Path}: not in the allowed-dependency table (add it, and to docs/architecture.md)");
                continue;
            }
            problems.AddRange(p.Projects.Except(allowed).Select(r => $"{p.Name} references {r}, which the table does not allow"));
            var packages = AllowedPackages.GetValueOrDefault(p.Name, []);
            problems.AddRange(p.Packages.Except(packages).Select(r => $"{p.Name} references package {r}, which the table does not allow"));
        }
        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
    }

    [Fact]
    public void Pure_projects_reference_no_hosting_project_no_io_package_and_no_web_framework()
    {
        var projects = SrcProjects();
        foreach (var name in Pure)
        {
            Assert.True(projects.TryGetValue(name, out var p), $"pure project {name} not found");
            var impure = Closure(projects, name).Where(r => !Pure.Contains(r)).ToList();
            Assert.True(impure.Count == 0, $"{name} depends on {string.Join(", ", impure)}, which are not pure");
            Assert.True(p.Frameworks.Count == 0, $"{name} references the frameworks {string.Join(", ", p.Frameworks)}");
            var io = p.Packages.Except(AllowedPackages.GetValueOrDefault(name, [])).ToList();
            Assert.True(io.Count == 0, $"{name} references the packages {string.Join(", ", io)}");
        }
    }

    /// <summary>
    /// What a pure project's code may not call: the disk, the registry, the clock, the environment, sleeping, and
    /// randomness that no seed controls. (Process-wide state is caught by review: a static lock or cache does
    /// not show in a name.)
    /// </summary>
    private static readonly System.Text.RegularExpressions.Regex ImpureCall = new(
        @"\bFile\.|\bDirectory\.|\bFileStream\b|\bRegistry\b|Environment\.(GetEnvironmentVariable|TickCount|ProcessId|MachineName|CurrentDirectory|GetFolderPath)"
        + @"|DateTime(Offset)?\.(Utc)?Now|\bStopwatch\b|\bTimeProvider\b|Thread\.Sleep|Task\.Delay|Random\.Shared|new Random\(\)|RandomNumberGenerator",
        System.Text.RegularExpressions.RegexOptions.CultureInvariant);

    [Fact]
    public void Pure_projects_code_touches_no_disk_clock_environment_or_unseeded_randomness()
    {
        var projects = SrcProjects();
        var problems = new List<string>();
        foreach (var name in Pure)
        {
            var folder = Path.GetDirectoryName(projects[name].Path)!;
            foreach (var file in Directory.EnumerateFiles(folder, "*.cs", SearchOption.AllDirectories)
                .Where(f => !f.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj")))
            {
                var lines = File.ReadAllLines(file);
                for (var i = 0; i < lines.Length; i++)
                {
                    var code = lines[i].TrimStart();
                    if (!code.StartsWith("//", StringComparison.Ordinal) && ImpureCall.Match(code) is { Success: true } m)
                    {
                        problems.Add($"{Path.GetRelativePath(RepositoryRoot(), file)}:{i + 1}: {m.Value}");
                    }
                }
            }
        }
        Assert.True(problems.Count == 0, "pure code calls out of the process:" + Environment.NewLine + string.Join(Environment.NewLine, problems));
    }

    [Fact]
    public void The_sdk_gets_a_client_not_a_replica()
    {
        var closure = Closure(SrcProjects(), "SieveQ.Sdk");
        Assert.Contains("SieveQ.Sieve", closure);
        Assert.Empty(closure.Intersect(NotForClients));
    }

    /// <summary>The SDK package carries its closure: a web framework there would make every client application a web server's.</summary>
    [Fact]
    public void The_sdk_closure_references_no_web_framework()
    {
        var projects = SrcProjects();
        var withFramework = Closure(projects, "SieveQ.Sdk").Append("SieveQ.Sdk")
            .Where(p => projects[p].Frameworks.Count > 0)
            .Select(p => $"{p} ({string.Join(", ", projects[p].Frameworks)})")
            .ToList();
        Assert.True(withFramework.Count == 0, "the SDK's closure references frameworks: " + string.Join("; ", withFramework));
    }

    /// <summary>
    /// Attack tools, compromised-component stages and fault injection are test code (tests/, e.g. SieveQ.Attacks): no
    /// shipped project may reference one, or the product would carry a switch that makes it misbehave.
    /// </summary>
    [Fact]
    public void No_shipped_project_references_test_code()
    {
        var testProjects = Directory.EnumerateFiles(Path.Combine(RepositoryRoot(), "tests"), "*.csproj", SearchOption.AllDirectories)
            .Where(f => !f.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj"))
            .Select(Path.GetFileNameWithoutExtension)
            .ToHashSet(StringComparer.Ordinal);
        Assert.Contains("SieveQ.Attacks", testProjects);
        var problems = SrcProjects().Values
            .SelectMany(p => p.Projects.Where(r => testProjects.Contains(r)).Select(r => $"{p.Name} references the test project {r}"))
            .ToList();
        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
    }

    /// <summary>Every project <paramref name="root"/> depends on, directly or not (itself excluded).</summary>
    private static HashSet<string> Closure(Dictionary<string, ProjectFile> projects, string root)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        var pending = new Stack<string>(projects[root].Projects);
        while (pending.TryPop(out var next))
        {
            if (seen.Add(next) && projects.TryGetValue(next, out var p))
            {
                foreach (var r in p.Projects)
                {
                    pending.Push(r);
                }
            }
        }
        return seen;
    }

    private static Dictionary<string, ProjectFile> SrcProjects()
    {
        var root = RepositoryRoot();
        var files = new[] { "bft-replica", "service", "sdk", "admin-ui" }
            .SelectMany(d => Directory.EnumerateFiles(Path.Combine(root, d), "*.csproj", SearchOption.AllDirectories))
            .Where(f => !f.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj"));
        return files.Select(Read).ToDictionary(p => p.Name, StringComparer.Ordinal);
    }

    private static ProjectFile Read(string path)
    {
        var doc = XDocument.Load(path);
        IReadOnlyList<string> Includes(string item) =>
            [.. doc.Descendants(item).Select(e => (string?)e.Attribute("Include")).OfType<string>()];
        // A reference's name is its file name: the project files are named after their assemblies.
        var projects = Includes("ProjectReference").Select(i => Path.GetFileNameWithoutExtension(i.Replace('\\', '/').Split('/')[^1])).ToList();
        return new ProjectFile(Path.GetFileNameWithoutExtension(path), path, projects, Includes("PackageReference"), Includes("FrameworkReference"));
    }

    /// <summary>The folder holding SieveQ.sln, found by walking up from the test binaries (wherever the build put them).</summary>
    private static string RepositoryRoot()
    {
        for (var d = new DirectoryInfo(AppContext.BaseDirectory); d is not null; d = d.Parent)
        {
            if (File.Exists(Path.Combine(d.FullName, "SieveQ.sln")))
            {
                return d.FullName;
            }
        }
        throw new InvalidOperationException("SieveQ.sln not found above " + AppContext.BaseDirectory);
    }
}
