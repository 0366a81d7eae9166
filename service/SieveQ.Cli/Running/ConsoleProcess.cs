using System.Diagnostics;

namespace SieveQ.Cli.Running;

/// <summary>
/// The web console (admin-ui/SieveQ.AdminUi), a separate executable copied beside sieveq as console/ by the build:
/// how to run it, and its one-shot `init` (console.json, its pinned key, the first administrator).
/// </summary>
internal static class ConsoleProcess
{
    public static string Dll => Path.Combine(AppContext.BaseDirectory, "console", "SieveQ.AdminUi.dll");

    public static bool IsBuilt => File.Exists(Dll);

    public static ProcessStartInfo Command(IReadOnlyList<string> args)
    {
        var psi = new ProcessStartInfo { FileName = DotnetHost(), UseShellExecute = false };
        psi.ArgumentList.Add("exec");
        psi.ArgumentList.Add(Dll);
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        return psi;
    }

    /// <summary>
    /// Runs `init` and returns its stdout lines (the console URL and, on first run only, the administrator's password).
    /// The console's key is an administrator at the controller here, so the Pre-SQs page's start, stop and replace work:
    /// `up` is a deployment on one machine whose administrator key sits in the same folder as the console's.
    /// </summary>
    public static async Task<(int ExitCode, IReadOnlyList<string> Lines, string Errors)> InitAsync(string deploymentDirectory, CancellationToken ct)
    {
        var psi = Command(["init", "--deployment", deploymentDirectory, "--controller-role", "administrator"]);
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        using var p = Process.Start(psi) ?? throw new InvalidOperationException("could not start the console");
        var output = p.StandardOutput.ReadToEndAsync(ct);
        var errors = p.StandardError.ReadToEndAsync(ct);
        await p.WaitForExitAsync(ct).ConfigureAwait(false);
        return (p.ExitCode, (await output.ConfigureAwait(false)).Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries), await errors.ConfigureAwait(false));
    }

    private static string DotnetHost()
    {
        var exe = Environment.ProcessPath;
        return exe is not null && Path.GetFileNameWithoutExtension(exe).Equals("dotnet", StringComparison.OrdinalIgnoreCase) ? exe : "dotnet";
    }
}
