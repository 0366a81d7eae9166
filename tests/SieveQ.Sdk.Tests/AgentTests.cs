using Google.Protobuf;
using SieveQ.Agent.Hosting;
using SieveQ.Sieve.Sender;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;
using SieveQ.Sdk.Tests.Fakes;
using SieveQ.Transport;

namespace SieveQ.Sdk.Tests;

/// <summary>The agent over a real Unix socket: caller identity from SO_PEERCRED, refusals, and the message path through it.</summary>
public sealed class AgentTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    private static async Task<AgentHost> StartAgentAsync(SieveWorld world) =>
        await AgentHost.StartAsync(world.Context, "agent", world.StateDir("agent"), options: new AgentHostOptions
        {
            Endpoint = Path.Combine(world.Directory, "a.sock"),
            Sender = new SieveQSenderOptions { Protocol = new SenderSqOptions { RetransmitAfterMs = 150, AckRequestIntervalMs = 20, AckResponseWaitMs = 150 } },
        });

    /// <summary>An agent that starts parties without a lease after 2 s of the deployment's silence and asks again every 300 ms.</summary>
    private static async Task<AgentHost> StartImpatientAgentAsync(SieveWorld world) =>
        await AgentHost.StartAsync(world.Context, "agent", world.StateDir("agent"), options: new AgentHostOptions
        {
            Endpoint = Path.Combine(world.Directory, "a.sock"),
            ConnectTimeout = TimeSpan.FromSeconds(2),
            LeaseRetryEvery = TimeSpan.FromMilliseconds(300),
        });

    /// <summary>One message as sender 1 through the agent; the stream's last progress report.</summary>
    private static async Task<SendProgress> SendOneAsSender1Async(GrpcChannel channel, string text)
    {
        var send = await channel.StartCallAsync<AppSend, SendProgress>(ProtocolNames.AgentService, ProtocolNames.Send, SendProgress.Parser);
        await using (send)
        {
            await send.WriteAsync(new AppSend { Open = new OpenSender { Sender = 1 } });
            await send.WriteAsync(new AppSend { Message = new OutgoingMessage { Receiver = SieveWorld.Receiver, Data = ByteString.CopyFromUtf8(text) } });
            await send.CompleteRequestAsync();
            SendProgress last = new();
            using var cts = new CancellationTokenSource(Patience);
            await foreach (var p in send.ReadAllAsync(cts.Token))
            {
                last = p;
            }
            return last;
        }
    }

    [Fact]
    public async Task Refuses_a_sender_it_does_not_host_and_names_the_calling_process()
    {
        await using var world = await SieveWorld.StartAsync();
        await using var agent = await StartAgentAsync(world);
        if (!OperatingSystem.IsWindows())
        {
            Assert.Equal(AgentEndpoint.SocketMode, File.GetUnixFileMode(agent.Endpoint) & (UnixFileMode)0x1FF);
        }
        using var channel = GrpcChannel.ForUnixSocket(agent.Endpoint);

        var call = await channel.StartCallAsync<AppSend, SendProgress>(ProtocolNames.AgentService, ProtocolNames.Send, SendProgress.Parser);
        await using (call)
        {
            await call.WriteAsync(new AppSend { Open = new OpenSender { Sender = 7 } });
            var refused = await Assert.ThrowsAsync<GrpcCallException>(async () =>
            {
                await foreach (var p in call.ReadAllAsync())
                {
                    Assert.Contains("does not host sender 7", p.Error, StringComparison.Ordinal);
                }
            });
            Assert.Equal(GrpcStatusCode.PermissionDenied, refused.Status);
            Assert.Contains($"pid {Environment.ProcessId} ", refused.Message, StringComparison.Ordinal);
            Assert.Contains(Environment.ProcessPath!, refused.Message, StringComparison.Ordinal);
        }

        var receive = await channel.StartCallAsync<ReceiveControl, AppDelivery>(ProtocolNames.AgentService, ProtocolNames.Receive, AppDelivery.Parser);
        await using (receive)
        {
            await receive.WriteAsync(new ReceiveControl { Open = new OpenReceiver { Receiver = 999 } });
            var refused = await Assert.ThrowsAsync<GrpcCallException>(async () =>
            {
                await foreach (var _ in receive.ReadAllAsync())
                {
                }
            });
            Assert.Equal(GrpcStatusCode.PermissionDenied, refused.Status);
        }

        var health = await channel.UnaryAsync(ProtocolNames.AgentService, ProtocolNames.Health, new HealthRequest(), HealthReply.Parser);
        Assert.Equal("agent", health.Component);
        Assert.Equal(Environment.ProcessId, health.Counters["caller_pid"]);
    }

    [Fact]
    public async Task Removes_its_socket_when_stopped()
    {
        await using var world = await SieveWorld.StartAsync();
        var agent = await StartAgentAsync(world);
        var path = agent.Endpoint;
        Assert.True(File.Exists(path));
        await agent.DisposeAsync();
        Assert.False(File.Exists(path));
    }

    [Fact]
    public async Task Carries_messages_from_an_application_to_another_exactly_once()
    {
        await using var world = await SieveWorld.StartAsync();
        await using var agent = await StartAgentAsync(world);
        using var channel = GrpcChannel.ForUnixSocket(agent.Endpoint);
        const int count = 30;

        var send = await channel.StartCallAsync<AppSend, SendProgress>(ProtocolNames.AgentService, ProtocolNames.Send, SendProgress.Parser);
        await using (send)
        {
            await send.WriteAsync(new AppSend { Open = new OpenSender { Sender = 1 } });
            for (var i = 0; i < count; i++)
            {
                await send.WriteAsync(new AppSend { Message = new OutgoingMessage { Receiver = SieveWorld.Receiver, Data = ByteString.CopyFromUtf8($"m{i}") } });
            }
            await send.CompleteRequestAsync();
            SendProgress last = new();
            using var cts = new CancellationTokenSource(Patience);
            await foreach (var p in send.ReadAllAsync(cts.Token))
            {
                last = p;
            }
            Assert.Equal(count, last.Accepted);
            Assert.True(last.Acknowledged >= last.LastSeq);
        }

        // First stream takes 10 and commits them, then goes away holding 5 more uncommitted.
        await ReceiveAsync(channel, take: 15, commitAfter: 10, expectFirst: 0);
        // The next stream gets the 5 uncommitted again, then the rest.
        await ReceiveAsync(channel, take: 20, commitAfter: 20, expectFirst: 10);
    }

    [Fact]
    public async Task The_agent_and_an_application_never_hold_one_id_at_once_whoever_comes_second_is_told_who_holds_it()
    {
        await using var world = await SieveWorld.StartAsync();
        await using var agent = await StartAgentAsync(world);
        using var channel = GrpcChannel.ForUnixSocket(agent.Endpoint);
        var config = world.Context.ToClientConfiguration();

        // The agent hosts sender 1 once an application opens it: it then holds the id's lease.
        var send = await channel.StartCallAsync<AppSend, SendProgress>(ProtocolNames.AgentService, ProtocolNames.Send, SendProgress.Parser);
        await using (send)
        {
            await send.WriteAsync(new AppSend { Open = new OpenSender { Sender = 1 } });
            await send.WriteAsync(new AppSend { Message = new OutgoingMessage { Receiver = SieveWorld.Receiver, Data = ByteString.CopyFromUtf8("via the agent") } });
            await send.CompleteRequestAsync();
            using var cts = new CancellationTokenSource(Patience);
            await foreach (var _ in send.ReadAllAsync(cts.Token))
            {
            }
        }
        var held = await Assert.ThrowsAsync<IdHeldException>(() => SieveQSender.ConnectAsync(config, 1, world.StateDir("app-1")));
        Assert.Contains(world.StateDir("agent"), held.Holder, StringComparison.Ordinal);

        // An application holds sender 2 first: the agent refuses to host it, naming the application.
        await using var app = await SieveQSender.ConnectAsync(config, 2, world.StateDir("app-2"));
        var second = await channel.StartCallAsync<AppSend, SendProgress>(ProtocolNames.AgentService, ProtocolNames.Send, SendProgress.Parser);
        await using (second)
        {
            await second.WriteAsync(new AppSend { Open = new OpenSender { Sender = 2 } });
            await second.CompleteRequestAsync();
            var e = await Assert.ThrowsAsync<GrpcCallException>(async () =>
            {
                using var cts = new CancellationTokenSource(Patience);
                await foreach (var _ in second.ReadAllAsync(cts.Token))
                {
                }
            });
            Assert.Equal(GrpcStatusCode.FailedPrecondition, e.Status);
            Assert.Contains("sender 2 cannot start: sender 2 is held by another process", e.Message, StringComparison.Ordinal);
            Assert.Contains(world.StateDir("app-2"), e.Message, StringComparison.Ordinal);
        }
    }

    /// <summary>
    /// The deployment does not answer when the agent starts sender 1: the agent starts it from its files (so it keeps
    /// accepting), without a lease, and asks for the lease again until the deployment answers; from then on an
    /// application that wants sender 1 is told the agent holds it.
    /// </summary>
    [Fact]
    public async Task A_sender_the_agent_started_without_a_lease_takes_it_once_the_deployment_answers()
    {
        await using var world = await SieveWorld.StartAsync();
        foreach (var r in world.Server.ReplicaUrls.Keys)
        {
            world.Server.EnrolmentAnswers[r] = _ => null;
        }
        world.Server.DropIdLease = _ => true;
        await using var agent = await StartImpatientAgentAsync(world);
        using var channel = GrpcChannel.ForUnixSocket(agent.Endpoint);
        Assert.Equal(1, (await SendOneAsSender1Async(channel, "before the lease")).Accepted);
        Assert.Equal(0, world.Server.Cluster.IdLeasesHeld);

        // The deployment answers again: at its next try the agent holds sender 1's lease.
        world.Server.DropIdLease = null;
        world.Server.EnrolmentAnswers.Clear();
        var deadline = DateTime.UtcNow + Patience;
        while (world.Server.Cluster.IdLeasesHeld == 0)
        {
            Assert.True(DateTime.UtcNow < deadline, "the agent never took the lease");
            await Task.Delay(100);
        }
        var held = await Assert.ThrowsAsync<IdHeldException>(() => SieveQSender.ConnectAsync(world.Context.ToClientConfiguration(), 1, world.StateDir("app-1")));
        Assert.Contains(world.StateDir("agent"), held.Holder, StringComparison.Ordinal);

        // The agent's own earlier messages and acknowledgement requests are no one else's: its sender goes on under the lease.
        var last = await SendOneAsSender1Async(channel, "under the lease");
        Assert.Equal(1, last.Accepted);
        Assert.True(last.Acknowledged >= last.LastSeq, $"acknowledged {last.Acknowledged} of {last.LastSeq}");
    }

    /// <summary>
    /// The agent started sender 1 without a lease, and an application took the id meanwhile: at its next try the agent
    /// finds the id held, stops its sender, and says so to whoever sends through it, naming the holder.
    /// </summary>
    [Fact]
    public async Task A_sender_the_agent_started_without_a_lease_stops_when_an_application_took_the_id_meanwhile()
    {
        await using var world = await SieveWorld.StartAsync();
        foreach (var r in world.Server.ReplicaUrls.Keys)
        {
            world.Server.EnrolmentAnswers[r] = _ => null;
        }
        var agentState = world.StateDir("agent");
        world.Server.DropIdLease = q => q.Label.Contains(agentState, StringComparison.Ordinal);
        await using var agent = await StartImpatientAgentAsync(world);
        using var channel = GrpcChannel.ForUnixSocket(agent.Endpoint);
        // Null when the stream ends well or is still waiting after `wait` (a message sent just before the agent's sender
        // stopped is a replay of the application's numbers and is never acknowledged).
        async Task<GrpcCallException?> SendOneAsync(TimeSpan wait)
        {
            var send = await channel.StartCallAsync<AppSend, SendProgress>(ProtocolNames.AgentService, ProtocolNames.Send, SendProgress.Parser);
            await using (send)
            {
                await send.WriteAsync(new AppSend { Open = new OpenSender { Sender = 1 } });
                await send.WriteAsync(new AppSend { Message = new OutgoingMessage { Receiver = SieveWorld.Receiver, Data = ByteString.CopyFromUtf8("m") } });
                await send.CompleteRequestAsync();
                try
                {
                    using var cts = new CancellationTokenSource(wait);
                    await foreach (var _ in send.ReadAllAsync(cts.Token))
                    {
                    }
                    return null;
                }
                catch (GrpcCallException e)
                {
                    return e;
                }
                catch (OperationCanceledException)
                {
                    return null;
                }
            }
        }
        Assert.Null(await SendOneAsync(Patience));

        world.Server.EnrolmentAnswers.Clear();
        await using var app = await SieveQSender.ConnectAsync(world.Context.ToClientConfiguration(), 1, world.StateDir("app"));
        var agentAsked = 0;
        world.Server.DropIdLease = q =>
        {
            if (q.Label.Contains(agentState, StringComparison.Ordinal))
            {
                Interlocked.Increment(ref agentAsked);
            }
            return false;
        };
        var deadline = DateTime.UtcNow + Patience;
        while (Volatile.Read(ref agentAsked) == 0)
        {
            Assert.True(DateTime.UtcNow < deadline, "the agent never asked for the lease again");
            await Task.Delay(100);
        }
        GrpcCallException? refused;
        while ((refused = await SendOneAsync(TimeSpan.FromSeconds(3))) is null)
        {
            Assert.True(DateTime.UtcNow < deadline, "the agent's sender never stopped");
            await Task.Delay(200);
        }
        Assert.Equal(GrpcStatusCode.FailedPrecondition, refused.Status);
        Assert.Contains("sender 1 is held by another process", refused.Message, StringComparison.Ordinal);
        Assert.Contains(world.StateDir("app"), refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Reports_what_it_refuses_on_the_stream_and_goes_on()
    {
        await using var world = await SieveWorld.StartAsync();
        await using var agent = await StartAgentAsync(world);
        using var channel = GrpcChannel.ForUnixSocket(agent.Endpoint);
        var route = world.Context.Config.Routes.Single(r => r.Sender == 1 && r.Receiver == SieveWorld.Receiver);

        var send = await channel.StartCallAsync<AppSend, SendProgress>(ProtocolNames.AgentService, ProtocolNames.Send, SendProgress.Parser);
        var outcomes = new List<SendOutcome>();
        SendProgress last = new();
        await using (send)
        {
            await send.WriteAsync(new AppSend { Open = new OpenSender { Sender = 1 } });
            await send.WriteAsync(new AppSend { Message = new OutgoingMessage { Receiver = SieveWorld.Receiver, Data = ByteString.CopyFromUtf8("m0") } });
            await send.WriteAsync(new AppSend { Message = new OutgoingMessage { Receiver = SieveWorld.Receiver, Data = ByteString.CopyFrom(new byte[route.MaxBytes + 1]) } });
            await send.WriteAsync(new AppSend { Message = new OutgoingMessage { Receiver = 999, Data = ByteString.CopyFromUtf8("to nobody") } });
            await send.WriteAsync(new AppSend { Message = new OutgoingMessage { Receiver = SieveWorld.Receiver, Data = ByteString.CopyFromUtf8("m1") } });
            await send.CompleteRequestAsync();
            using var cts = new CancellationTokenSource(Patience);
            await foreach (var p in send.ReadAllAsync(cts.Token))
            {
                outcomes.AddRange(p.Outcomes);
                last = p;
            }
        }

        Assert.Equal(2, last.Accepted);
        Assert.Equal(2, last.Refused);
        Assert.Equal(2, last.Delivered);
        Assert.True(last.Acknowledged >= last.LastSeq);
        Assert.Collection(outcomes.OrderBy(o => o.Index),
            o =>
            {
                Assert.Equal((2L, SendOutcomeKind.Refused, "TooLarge", 0L), (o.Index, o.Kind, o.Reason, o.Seq));
                Assert.Contains(route.MaxBytes.ToString(System.Globalization.CultureInfo.InvariantCulture), o.Detail, StringComparison.Ordinal);
            },
            o =>
            {
                Assert.Equal((3L, SendOutcomeKind.Refused, "ReceiverNotEnrolled", 999), (o.Index, o.Kind, o.Reason, o.Receiver));
                Assert.Contains("999", o.Detail, StringComparison.Ordinal);
            });

        // The refused messages took no number: the receiver gets the two others, in order.
        await ReceiveDataAsync(channel, ["m0", "m1"]);
    }

    private static async Task ReceiveDataAsync(GrpcChannel channel, string[] expected)
    {
        var call = await channel.StartCallAsync<ReceiveControl, AppDelivery>(ProtocolNames.AgentService, ProtocolNames.Receive, AppDelivery.Parser);
        await using (call)
        {
            await call.WriteAsync(new ReceiveControl { Open = new OpenReceiver { Receiver = SieveWorld.Receiver } });
            var got = new List<AppDelivery>();
            using var cts = new CancellationTokenSource(Patience);
            await foreach (var d in call.ReadAllAsync(cts.Token))
            {
                got.Add(d);
                if (got.Count == expected.Length)
                {
                    await call.WriteAsync(new ReceiveControl { Commit = got.Count });
                    await call.CompleteRequestAsync();
                }
            }
            Assert.Equal(expected, got.Select(d => d.Data.ToStringUtf8()));
            Assert.Equal([1L, 2L], got.Select(d => d.SenderSeq - got[0].SenderSeq + 1));
        }
    }

    private static async Task ReceiveAsync(GrpcChannel channel, int take, int commitAfter, int expectFirst)
    {
        var call = await channel.StartCallAsync<ReceiveControl, AppDelivery>(ProtocolNames.AgentService, ProtocolNames.Receive, AppDelivery.Parser);
        await using (call)
        {
            await call.WriteAsync(new ReceiveControl { Open = new OpenReceiver { Receiver = SieveWorld.Receiver } });
            var got = new List<string>();
            using var cts = new CancellationTokenSource(Patience);
            await foreach (var d in call.ReadAllAsync(cts.Token))
            {
                if (got.Count == take)
                {
                    continue;  // after the half-close: delivered to a closing application, so not committed
                }
                got.Add(d.Data.ToStringUtf8());
                if (got.Count == commitAfter)
                {
                    await call.WriteAsync(new ReceiveControl { Commit = commitAfter });
                }
                if (got.Count == take)
                {
                    // Half-close: the agent applies every commit sent before it and then ends the call.
                    // (A reset stream may lose the last commit; those messages would come again, not be lost.)
                    await call.CompleteRequestAsync();
                }
            }
            Assert.Equal(Enumerable.Range(expectFirst, take).Select(i => $"m{i}"), got);
        }
    }
}
