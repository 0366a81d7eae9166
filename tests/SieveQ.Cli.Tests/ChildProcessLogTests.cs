using System.Diagnostics;
using SieveQ.Deployment;

namespace SieveQ.Cli.Tests;

public sealed class ChildProcessLogTests
{
    [Fact]
    public async Task Every_line_of_both_streams_reaches_the_log_even_when_the_process_exits_at_once()
    {
        var path = Path.Combine(Path.GetTempPath(), $"sieveq-childlog-{Guid.NewGuid():N}.log");
        try
        {
            var log = new ChildProcessLog(path);
            using var p = new Process
            {
                StartInfo = new ProcessStartInfo("/bin/sh", ["-c", "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo out$i; done; echo last-words >&2"])
                {
                    RedirectStandardOutput = true,
                    RedirectStandardError = true,
                    UseShellExecute = false,
                },
                EnableRaisingEvents = true,
            };
            log.Write("---- start");
            log.Attach(p);
            log.Start(p);
            await p.WaitForExitAsync();

            // The file closes once both pipes are drained; until then it may still be filling.
            string[] lines = [];
            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
            while (DateTime.UtcNow < deadline && !(lines.Contains("out3000") && lines.Contains("last-words")))
            {
                await Task.Delay(20);
                lines = ReadShared(path);
            }

            Assert.Equal("---- start", lines[0]);
            Assert.Equal(3000, lines.Count(l => l.StartsWith("out", StringComparison.Ordinal)));
            Assert.Contains("last-words", lines);
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public async Task Stdout_can_go_to_the_caller_instead_of_the_log()
    {
        var path = Path.Combine(Path.GetTempPath(), $"sieveq-childlog-{Guid.NewGuid():N}.log");
        try
        {
            var seen = new System.Collections.Concurrent.ConcurrentQueue<string>();
            var log = new ChildProcessLog(path);
            using var p = new Process
            {
                StartInfo = new ProcessStartInfo("/bin/sh", ["-c", "echo status-line; echo warning >&2"])
                {
                    RedirectStandardOutput = true,
                    RedirectStandardError = true,
                    UseShellExecute = false,
                },
            };
            log.Attach(p, seen.Enqueue);
            log.Start(p);
            await p.WaitForExitAsync();
            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
            while (DateTime.UtcNow < deadline && !(seen.Contains("status-line") && ReadShared(path).Contains("warning")))
            {
                await Task.Delay(20);
            }

            Assert.Equal(["status-line"], seen);
            Assert.Equal(["warning"], ReadShared(path));
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void A_process_that_cannot_start_leaves_no_open_log()
    {
        var path = Path.Combine(Path.GetTempPath(), $"sieveq-childlog-{Guid.NewGuid():N}.log");
        try
        {
            var log = new ChildProcessLog(path);
            using var p = new Process { StartInfo = new ProcessStartInfo("/nonexistent/sieveq-no-such-program") { RedirectStandardOutput = true, RedirectStandardError = true } };
            log.Attach(p);
            Assert.ThrowsAny<System.ComponentModel.Win32Exception>(() => log.Start(p));

            // Closed: the file can be opened exclusively, and later writes are dropped, not thrown.
            using (new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.None))
            {
            }
            log.Write("after");
        }
        finally
        {
            File.Delete(path);
        }
    }

    private static string[] ReadShared(string path)
    {
        using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        using var reader = new StreamReader(stream);
        return reader.ReadToEnd().Split('\n', StringSplitOptions.RemoveEmptyEntries);
    }
}
