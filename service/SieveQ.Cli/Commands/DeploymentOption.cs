using System.CommandLine;

namespace SieveQ.Cli.Commands;

/// <summary>
/// The one way every command names a deployment: <c>--deployment</c>, with <c>--dir</c> as its alias, so that
/// <c>up --dir D</c> and <c>status --deployment D</c> are no longer two spellings a new operator has to remember.
/// </summary>
internal static class DeploymentOption
{
    /// <summary>Where <c>up</c> creates a deployment when none is named (ignored by git: see <c>DeploymentBootstrap</c>).</summary>
    public static string DefaultDirectory { get; } = Path.Combine(".sieveq", "local");

    /// <summary>An option that falls back to <see cref="DefaultDirectory"/>.</summary>
    public static Option<DirectoryInfo> WithDefault(string description) => new("--deployment", "--dir")
    {
        Description = $"{description} [alias --dir]",
        DefaultValueFactory = _ => new DirectoryInfo(DefaultDirectory),
    };

    /// <summary>An option the command cannot run without (component hosts, `deploy init`, `rules push`).</summary>
    public static Option<DirectoryInfo> Required(string description) => new("--deployment", "--dir")
    {
        Description = $"{description} [alias --dir]",
        Required = true,
    };
}
