using System.CommandLine;
using System.Diagnostics;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq bench attack`: the attack benchmark (docs/attacks.md). The attackers are test code and never ship in this
/// binary, so this command only finds the test-built attack program (tests/SieveQ.Attacks, in a source checkout above
/// the current directory) and runs it with the same arguments; without it, it says how to build it.
/// </summary>
internal static class BenchAttackCommand
{
    /// <summary>Where the attack program is built, relative to the repository root.</summary>
    public static readonly string ProgramPath = Path.Combine("tests", "SieveQ.Attacks", "bin", "Release", "net10.0", "SieveQ.Attacks.dll");

    public static Command Build()
    {
        var cmd = new Command("attack", "The paper's attacks under a steady legitimate load (test code: runs tests/SieveQ.Attacks from a source checkout; --help there lists the options).")
        {
            TreatUnmatchedTokensAsErrors = false,
        };
        cmd.SetAction(async (parse, ct) =>
        {
            if (Find(Environment.CurrentDirectory) is not { } program)
            {
                await Console.Error.WriteLineAsync(
                    "the attack tools are test code and not part of this binary. From a SieveQ source checkout: "
                    + "`dotnet build tests/SieveQ.Attacks -c Release`, then run `sieveq bench attack --kind KIND` inside the checkout, "
                    + "or `dotnet run --project tests/SieveQ.Attacks -c Release -- --kind KIND` (docs/attacks.md).").ConfigureAwait(false);
                return 2;
            }
            var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false };
            psi.ArgumentList.Add(program);
            foreach (var token in parse.UnmatchedTokens)
            {
                psi.ArgumentList.Add(token);
            }
            using var p = Process.Start(psi) ?? throw new InvalidOperationException("could not start dotnet");
            try
            {
                await p.WaitForExitAsync(ct).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                // Ctrl-C reached the attack program too (same terminal); it stops its components itself.
                await p.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
            }
            return p.ExitCode;
        });
        return cmd;
    }

    /// <summary>The attack program built in the checkout that holds <paramref name="directory"/>, or null.</summary>
    internal static string? Find(string directory)
    {
        for (var d = new DirectoryInfo(directory); d is not null; d = d.Parent)
        {
            var candidate = Path.Combine(d.FullName, ProgramPath);
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }
        return null;
    }
}
