using System.Diagnostics;
using System.Text;
using SieveQ.Deployment;

namespace SieveQ.Cli.Tests;

/// <summary>
/// The controller and `sieveq admin` through the real CLI: `sieveq controller --create-local` on a fresh deployment
/// (nothing else running, so every component is DOWN), then `admin status`, `quarantine` and `audit` with the local
/// viewer and operator keys.
/// </summary>
public sealed class AdminCommandsTests
{
    [Fact]
    public async Task Admin_status_lists_the_components_and_changes_are_role_checked_and_audited()
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-admin-").FullName;
        var cfg = DeploymentBootstrap.Create(dir, new LocalDeploymentSpec { BasePort = PortPlan.FindFreeBase(4, 2), Durability = false });
        var viewerKey = Path.Combine(cfg.Resolve(cfg.KeyDirectory), "management-viewer.pem");
        var operatorKey = Path.Combine(cfg.Resolve(cfg.KeyDirectory), "management-operator.pem");
        using var controller = Process.Start(SieveqProcess.Info(["controller", "--deployment", dir, "--create-local", "--log-level", "Warning"]))!;
        var output = new StringBuilder();
        var listening = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        controller.OutputDataReceived += (_, e) =>
        {
            lock (output)
            {
                output.AppendLine(e.Data);
            }
            if (e.Data?.StartsWith("controller listening on", StringComparison.Ordinal) == true)
            {
                listening.TrySetResult();
            }
        };
        controller.ErrorDataReceived += (_, e) =>
        {
            lock (output)
            {
                output.AppendLine(e.Data);
            }
        };
        controller.BeginOutputReadLine();
        controller.BeginErrorReadLine();
        try
        {
            await Task.WhenAny(listening.Task, controller.WaitForExitAsync(), Task.Delay(TimeSpan.FromMinutes(1)));
            Assert.True(listening.Task.IsCompleted, $"the controller did not start:\n{output}");

            var status = await SieveqProcess.RunAsync(["admin", "status", "--deployment", dir, "--key", viewerKey]);
            Assert.True(status.Code == 0, status.Stdout + status.Stderr);
            foreach (var name in cfg.Replicas.Select(r => r.Name).Concat(cfg.PreSqs.Select(p => p.Name)))
            {
                Assert.Contains(name, status.Stdout, StringComparison.Ordinal);
            }
            Assert.Contains("DOWN", status.Stdout, StringComparison.Ordinal);
            Assert.Contains("viewer", status.Stdout, StringComparison.Ordinal);

            var denied = await SieveqProcess.RunAsync(["admin", "quarantine", "--deployment", dir, "--key", viewerKey, "--sender", "1", "--reason", "test"]);
            Assert.Equal(1, denied.Code);
            Assert.Contains("PermissionDenied", denied.Stderr, StringComparison.Ordinal);

            var recorded = await SieveqProcess.RunAsync(["admin", "quarantine", "--deployment", dir, "--key", operatorKey, "--sender", "1", "--reason", "test"]);
            Assert.True(recorded.Code == 3, recorded.Stdout + recorded.Stderr);
            Assert.Contains("NOT applied", recorded.Stdout, StringComparison.Ordinal);
            // A local deployment pins the key the controller holds, so it orders the change; nothing runs to take it.
            Assert.Contains("not applied: no pre-SQ took the command", recorded.Stdout, StringComparison.Ordinal);

            var both = await SieveqProcess.RunAsync(["admin", "readmit", "--deployment", dir, "--key", operatorKey, "--sender", "1", "--pre-sq", "4"]);
            Assert.Equal(2, both.Code);
            Assert.Contains("name exactly one party", both.Stdout + both.Stderr, StringComparison.Ordinal);

            var audit = await SieveqProcess.RunAsync(["admin", "audit", "--deployment", dir, "--key", viewerKey]);
            Assert.True(audit.Code == 0, audit.Stdout + audit.Stderr);
            Assert.Contains("(operator, operator) from 127.0.0.1  quarantine-sender sender 1 (reason: test)", audit.Stdout, StringComparison.Ordinal);
            Assert.Contains("(viewer, viewer) from 127.0.0.1  quarantine-sender sender 1 (reason: test): refused", audit.Stdout, StringComparison.Ordinal);

            var unknownKey = Path.Combine(dir, "stranger.pem");
            using (var stranger = System.Security.Cryptography.ECDsa.Create(System.Security.Cryptography.ECCurve.NamedCurves.nistP256))
            {
                await File.WriteAllTextAsync(unknownKey, stranger.ExportPkcs8PrivateKeyPem());
            }
            var refused = await SieveqProcess.RunAsync(["admin", "status", "--deployment", dir, "--key", unknownKey]);
            Assert.Equal(1, refused.Code);
            Assert.Contains("Unauthenticated", refused.Stderr, StringComparison.Ordinal);
        }
        finally
        {
            if (!controller.HasExited)
            {
                controller.Kill(entireProcessTree: true);
                await controller.WaitForExitAsync();
            }
            Directory.Delete(dir, recursive: true);
        }
    }
}
