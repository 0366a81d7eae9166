using System.CommandLine;
using SieveQ.Cli.Running;
using SieveQ.Deployment;

namespace SieveQ.Cli.Commands;

/// <summary>`sieveq status`: every component's health, from its own endpoint. Exit 0 only when all are healthy.</summary>
internal static class StatusCommand
{
    public static Command Build()
    {
        var dir = DeploymentOption.WithDefault("Deployment directory or deployment.json.");
        var verbose = new Option<bool>("--counters") { Description = "Also print each component's counters." };
        var cmd = new Command("status", "Report the health of every component of a deployment.") { dir, verbose };
        cmd.SetAction(async (parse, ct) =>
        {
            DeploymentConfig cfg;
            try
            {
                cfg = DeploymentFile.Load(parse.GetValue(dir)!.FullName);
            }
            catch (DeploymentException e)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return 2;
            }
            // Two probes a second apart: the rates come from their difference.
            var before = await DeploymentHealth.ProbeAllAsync(cfg, TimeSpan.FromSeconds(3), ct).ConfigureAwait(false);
            var clock = System.Diagnostics.Stopwatch.StartNew();
            await Task.Delay(TimeSpan.FromSeconds(1), ct).ConfigureAwait(false);
            var all = await DeploymentHealth.ProbeAllAsync(cfg, TimeSpan.FromSeconds(3), ct).ConfigureAwait(false);
            var seconds = clock.Elapsed.TotalSeconds;
            foreach (var h in all)
            {
                var state = h.Healthy ? "healthy" : h.Reachable ? "UNHEALTHY" : "DOWN";
                Console.WriteLine($"{h.Component,-11} {h.Name,-14} {state,-9} {h.Endpoint}  {h.Detail}");
                var earlier = before.FirstOrDefault(b => b.Component == h.Component && b.Name == h.Name && b.Reachable);
                if (StatusFigures.Of(h, earlier, seconds) is { } figures)
                {
                    Console.WriteLine($"    {figures}");
                }
                if (parse.GetValue(verbose))
                {
                    foreach (var (k, v) in h.Counters.OrderBy(kv => kv.Key, StringComparer.Ordinal))
                    {
                        Console.WriteLine($"    {k} = {v}");
                    }
                }
            }
            foreach (var line in StatusFigures.Sieve(all, before, seconds, cfg.F))
            {
                Console.WriteLine(line);
            }
            var ok = all.Count(h => h.Healthy);
            Console.WriteLine($"{ok}/{all.Count} components healthy");
            return ok == all.Count ? 0 : 1;
        });
        return cmd;
    }
}
