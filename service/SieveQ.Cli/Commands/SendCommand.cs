using System.CommandLine;
using System.Globalization;
using Google.Protobuf;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq send`: one message (or a few copies) through the deployment's agent, and how it ended: delivered,
/// refused at the agent (too large, no route, receiver not enrolled) or rejected by the replica-SQs' rules.
/// </summary>
internal static class SendCommand
{
    /// <summary>Exit codes beyond 0 (every message delivered) and 2 (bad arguments).</summary>
    public const int ExitAgentRefused = 3;
    public const int ExitNotDelivered = 4;
    public const int ExitNoOutcome = 5;

    /// <summary>Above this a message is a file transfer, not something to type or send from the command line.</summary>
    public const int MaxCount = 10_000;

    public static Command Build()
    {
        var deployment = DeploymentOption.WithDefault("Deployment directory (its deployment.json names the agent's socket).");
        var sender = new Option<int>("--sender") { Description = "Sender id; an agent of the deployment must host it.", Required = true };
        var receiver = new Option<int>("--receiver") { Description = "Receiver id.", Required = true };
        var text = new Option<string?>("--text") { Description = "The message, as UTF-8 text." };
        var file = new Option<FileInfo?>("--file") { Description = "The message: this file's bytes." };
        var count = new Option<int>("--count") { Description = $"Send the message this many times (1..{MaxCount}).", DefaultValueFactory = _ => 1 };
        var timeout = new Option<string>("--timeout") { Description = "Give up waiting for the outcome after this long (e.g. 30s, 2m).", DefaultValueFactory = _ => "30s" };
        var socket = new Option<string?>("--socket") { Description = "The agent's socket, instead of the one deployment.json names for the sender." };
        var cmd = new Command("send", "Send one message through the deployment's agent and print how it ended (delivered, refused or rejected).")
        {
            deployment, sender, receiver, text, file, count, timeout, socket,
        };
        cmd.SetAction(async (ParseResult p, CancellationToken ct) =>
        {
            string? problem = null;
            byte[] data = [];
            var wait = TimeSpan.Zero;
            try
            {
                wait = ClusterSupport.ParseDuration(p.GetValue(timeout)!);
            }
            catch (FormatException)
            {
                problem = $"--timeout '{p.GetValue(timeout)}' is not a duration (e.g. 30s, 2m)";
            }
            if (problem is null && (wait <= TimeSpan.Zero || wait > TimeSpan.FromHours(1)))
            {
                problem = "--timeout must be above 0 and at most 1h";
            }
            if (p.GetValue(count) is < 1 or > MaxCount)
            {
                problem = $"--count must be 1..{MaxCount}";
            }
            var (t, f) = (p.GetValue(text), p.GetValue(file));
            if ((t is null) == (f is null))
            {
                problem = "give the message with exactly one of --text or --file";
            }
            else if (f is not null && !f.Exists)
            {
                problem = $"--file {f.FullName} does not exist";
            }
            else if (f is not null && f.Length > 64L * 1024 * 1024)
            {
                problem = $"--file {f.FullName} is {f.Length} bytes: above what any route admits";
            }
            string? path = p.GetValue(socket);
            if (problem is null && path is null)
            {
                (path, problem) = AgentSocket(p.GetValue(deployment)!, p.GetValue(sender));
            }
            if (problem is not null)
            {
                await Console.Error.WriteLineAsync($"error: {problem}").ConfigureAwait(false);
                return 2;
            }
            data = t is not null ? System.Text.Encoding.UTF8.GetBytes(t) : await File.ReadAllBytesAsync(f!.FullName, ct).ConfigureAwait(false);
            return await SendAsync(path!, p.GetValue(sender), p.GetValue(receiver), data, p.GetValue(count), wait, ct).ConfigureAwait(false);
        });
        return cmd;
    }

    /// <summary>The socket of the agent that hosts <paramref name="sender"/>, or why there is none.</summary>
    internal static (string? Socket, string? Problem) AgentSocket(DirectoryInfo deployment, int sender)
    {
        DeploymentConfig cfg;
        try
        {
            cfg = DeploymentFile.Load(deployment.FullName);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or DeploymentException)
        {
            return (null, e.Message);
        }
        var agent = cfg.Agents.FirstOrDefault(a => a.Senders.Contains(sender));
        if (agent is null)
        {
            var hosted = cfg.Agents.SelectMany(a => a.Senders).Order().ToList();
            return (null, $"no agent of {cfg.BaseDirectory} hosts sender {sender} (hosted: {(hosted.Count == 0 ? "none" : string.Join(", ", hosted))}); an application on the SDK sends as its own sender");
        }
        return (cfg.Resolve(agent.Socket), null);
    }

    private static async Task<int> SendAsync(string socketPath, int senderId, int receiverId, byte[] data, int count, TimeSpan wait, CancellationToken ct)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(ct);
        deadline.CancelAfter(wait);
        using var channel = GrpcChannel.ForUnixSocket(socketPath);
        var outcomes = new List<SendOutcome>();
        var last = new SendProgress();
        try
        {
            var call = await channel.StartCallAsync<AppSend, SendProgress>(ProtocolNames.AgentService, ProtocolNames.Send, SendProgress.Parser, deadline.Token).ConfigureAwait(false);
            await using (call.ConfigureAwait(false))
            {
                await call.WriteAsync(new AppSend { Open = new OpenSender { Sender = senderId } }, deadline.Token).ConfigureAwait(false);
                var payload = ByteString.CopyFrom(data);
                for (var i = 0; i < count; i++)
                {
                    await call.WriteAsync(new AppSend { Message = new OutgoingMessage { Receiver = receiverId, Data = payload } }, deadline.Token, flush: false).ConfigureAwait(false);
                }
                await call.FlushAsync(deadline.Token).ConfigureAwait(false);
                await call.CompleteRequestAsync().ConfigureAwait(false);
                await foreach (var progress in call.ReadAllAsync(deadline.Token).ConfigureAwait(false))
                {
                    if (progress.Error.Length > 0)
                    {
                        await Console.Error.WriteLineAsync($"agent refused: {progress.Error}").ConfigureAwait(false);
                        return ExitAgentRefused;
                    }
                    outcomes.AddRange(progress.Outcomes);
                    last = progress;
                }
            }
        }
        catch (OperationCanceledException) when (deadline.IsCancellationRequested && !ct.IsCancellationRequested)
        {
            Report(senderId, receiverId, outcomes, last);
            var open = last.Accepted - last.Delivered - outcomes.Count(o => o.Kind != SendOutcomeKind.Refused);
            await Console.Error.WriteLineAsync(string.Create(CultureInfo.InvariantCulture,
                $"no outcome within {wait.TotalSeconds:0} s for {open} message(s): the agent keeps what it accepted and sends it when the deployment answers (sieveq status)")).ConfigureAwait(false);
            return ExitNoOutcome;
        }
        catch (GrpcCallException e)
        {
            await Console.Error.WriteLineAsync($"agent refused: {e.Message}").ConfigureAwait(false);
            return ExitAgentRefused;
        }
        catch (Exception e) when (e is IOException or System.Net.Sockets.SocketException or HttpRequestException)
        {
            await Console.Error.WriteLineAsync($"error: cannot reach the agent at {socketPath}: {e.Message} (is `sieveq up` or the agent running?)").ConfigureAwait(false);
            return ExitAgentRefused;
        }
        Report(senderId, receiverId, outcomes, last);
        return last.Delivered == count ? 0 : ExitNotDelivered;
    }

    private static void Report(int sender, int receiver, List<SendOutcome> outcomes, SendProgress last)
    {
        foreach (var o in outcomes)
        {
            Console.WriteLine(o.Kind switch
            {
                SendOutcomeKind.Refused => $"message {o.Index} to receiver {o.Receiver}: refused by the agent ({o.Reason}): {o.Detail}",
                SendOutcomeKind.Rejected => $"message {o.Index} (sequence {o.Seq}) to receiver {o.Receiver}: rejected by the replica-SQs ({o.Reason}): {o.Detail}",
                SendOutcomeKind.TimedOut => $"message {o.Index} (sequence {o.Seq}) to receiver {o.Receiver}: no verdict in time; kept and retransmitted",
                _ => $"message {o.Index} (sequence {o.Seq}) to receiver {o.Receiver}: taken, verdict unknown",
            });
        }
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"sender {sender} to receiver {receiver}: {last.Delivered} delivered, {last.Refused} refused, {outcomes.Count(o => o.Kind == SendOutcomeKind.Rejected)} rejected (sequence numbers up to {last.LastSeq}, acknowledged up to {last.Acknowledged})"));
    }
}
