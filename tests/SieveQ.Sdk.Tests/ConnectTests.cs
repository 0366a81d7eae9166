using Google.Protobuf;
using SieveQ.Agent.Hosting;
using SieveQ.Protocol.V1;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;
using SieveQ.Sdk.Tests.Fakes;
using SieveQ.Sieve.Hosting.Keys;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sdk.Tests;

/// <summary>
/// ConnectAsync asks the running deployment's replica-SQs how the party stands before it opens anything, and believes
/// what f+1 of them answered alike: a party that is not enrolled, revoked, or holds other keys than the enrolled ones is
/// refused with a typed error naming why (before, Create trusted the application's copy of the enrolment and such a
/// sender's frames were dropped in silence); a sender missing from that copy but enrolled in the deployment starts.
/// </summary>
public sealed class ConnectTests
{
    private static SieveQClientConfiguration Config(SieveWorld world, TimeSpan? timeout = null) =>
        world.Context.ToClientConfiguration() with { ConnectTimeout = timeout ?? TimeSpan.FromSeconds(10) };

    private static EnrolmentStanding Revoked() => new() { State = EnrolmentState.Revoked, ThroughOrdering = true };

    [Fact]
    public async Task An_enrolled_sender_and_receiver_connect_and_a_message_goes_through()
    {
        await using var world = await SieveWorld.StartAsync();
        await using var sender = await SieveQSender.ConnectAsync(Config(world), 1, world.StateDir("sender"));
        await using var receiver = await SieveQReceiver.ConnectAsync(Config(world), SieveWorld.Receiver, world.StateDir("receiver"));
        var seq = await sender.SendAsync(SieveWorld.Receiver, "hello"u8.ToArray());
        await sender.WaitAcknowledgedAsync(seq).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.All(world.Server.ReplicaUrls.Keys, r => Assert.True(world.Server.EnrolmentLookups.GetValueOrDefault(r) <= 2));
        Assert.True(world.Server.EnrolmentLookups.Values.Sum() >= 4, "each ConnectAsync asked at least f+1 replicas");
    }

    [Fact]
    public async Task A_sender_missing_from_the_applications_enrolment_copy_but_enrolled_in_the_deployment_starts_with_the_deployments_keys()
    {
        await using var world = await SieveWorld.StartAsync();
        var config = Config(world);
        var stale = config with { Enrolment = config.Enrolment with { Senders = [.. config.Enrolment.Senders.Where(s => s.Id != 2)] } };

        var refused = Assert.Throws<SieveQConfigurationException>(() => SieveQSender.Create(stale, 2, world.StateDir("create")));
        Assert.Contains("sender 2 is not enrolled in this deployment", refused.Message, StringComparison.Ordinal);

        await using var sender = await SieveQSender.ConnectAsync(stale, 2, world.StateDir("connect"));
        var seq = await sender.SendAsync(SieveWorld.Receiver, "enrolled elsewhere"u8.ToArray());
        await sender.WaitAcknowledgedAsync(seq).WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(seq, sender.AcknowledgedUpTo);
    }

    [Fact]
    public async Task A_sender_with_keys_but_no_enrolment_is_refused_naming_the_enrolment_commands()
    {
        await using var world = await SieveWorld.StartAsync();
        var keys = OwnKeys(world, PartyKeyNames.Sender, 9);
        var e = await Assert.ThrowsAsync<SieveQConfigurationException>(() => SieveQSender.ConnectAsync(Config(world) with { Keys = keys }, 9, world.StateDir("s9")));
        Assert.Contains("sender 9 is not enrolled in the running deployment (2 replica-SQs agree)", e.Message, StringComparison.Ordinal);
        Assert.Contains("sieveq enrol sender", e.Message, StringComparison.Ordinal);
        Assert.False(Directory.Exists(world.StateDir("s9")), "nothing is opened before the check");

        var r = await Assert.ThrowsAsync<SieveQConfigurationException>(() =>
            SieveQReceiver.ConnectAsync(Config(world) with { Keys = OwnKeys(world, PartyKeyNames.Receiver, 909) }, 909, world.StateDir("r909")));
        Assert.Contains("receiver 909 is not enrolled in the running deployment", r.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_revoked_sender_is_refused_as_revoked()
    {
        await using var world = await SieveWorld.StartAsync();
        foreach (var replica in world.Server.ReplicaUrls.Keys)
        {
            world.Server.EnrolmentAnswers[replica] = _ => Revoked();
        }
        var e = await Assert.ThrowsAsync<SieveQConfigurationException>(() => SieveQSender.ConnectAsync(Config(world), 1, world.StateDir("sender")));
        Assert.Contains("sender 1 was revoked through the ordering", e.Message, StringComparison.Ordinal);
        Assert.Contains("never enrolled again", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Keys_other_than_the_enrolled_ones_are_refused_before_anything_is_sent()
    {
        await using var world = await SieveWorld.StartAsync();
        // Sender 1's name in a key store of its own, holding fresh keys the deployment never saw.
        var e = await Assert.ThrowsAsync<SieveQConfigurationException>(() =>
            SieveQSender.ConnectAsync(Config(world) with { Keys = OwnKeys(world, PartyKeyNames.Sender, 1) }, 1, world.StateDir("sender")));
        Assert.Contains("the signing key 'sender-1-sign' in the configured key store is not the one the running deployment enrolled for sender 1", e.Message, StringComparison.Ordinal);
        Assert.Equal(0, world.Server.FramesReceived.Values.Sum());
    }

    [Fact]
    public async Task F_faulty_replicas_can_neither_deny_an_enrolment_nor_enrol_other_keys()
    {
        await using var world = await SieveWorld.StartAsync();
        var replicas = world.Server.ReplicaUrls.Keys.Order().ToArray();

        // One replica (f = 1) says revoked: the other three say enrolled, and the sender starts.
        world.Server.EnrolmentAnswers[replicas[0]] = _ => Revoked();
        await using (var sender = await SieveQSender.ConnectAsync(Config(world), 1, world.StateDir("a")))
        {
            Assert.Equal(1, sender.Id);
        }

        // One replica vouches for a stranger's keys: f+1 are needed, so the stranger is still refused as not enrolled.
        var stranger = OwnKeys(world, PartyKeyNames.Sender, 9);
        world.Server.EnrolmentAnswers[replicas[0]] = l => l.Id == 9 ? Enrolled(stranger, 9) : world.Server.StandingOf(l);
        var e = await Assert.ThrowsAsync<SieveQConfigurationException>(() => SieveQSender.ConnectAsync(Config(world) with { Keys = stranger }, 9, world.StateDir("b")));
        Assert.Contains("not enrolled in the running deployment", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Without_f_plus_1_answers_in_time_the_connect_ends_in_a_typed_error_and_opens_nothing()
    {
        await using var world = await SieveWorld.StartAsync();
        var replicas = world.Server.ReplicaUrls.Keys.Order().ToArray();
        // Once with every replica answering, so that what is timed below is the replicas' silence, not a cold start.
        await (await SieveQSender.ConnectAsync(Config(world), 1, world.StateDir("warm"))).DisposeAsync();
        foreach (var r in replicas.Skip(1))
        {
            world.Server.EnrolmentAnswers[r] = _ => null;
        }
        var started = DateTime.UtcNow;
        var e = await Assert.ThrowsAsync<ConnectUnconfirmedException>(() =>
            SieveQSender.ConnectAsync(Config(world, TimeSpan.FromSeconds(3)), 1, world.StateDir("sender")));
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(20));
        Assert.Equal(1, e.Answered);
        Assert.Equal(1, e.Agreeing);
        Assert.Equal(2, e.Needed);
        Assert.Contains("sender 1: the running deployment did not confirm its enrolment within 3 s", e.Message, StringComparison.Ordinal);
        Assert.False(Directory.Exists(world.StateDir("sender")));

        // A caller's own cancellation stays a cancellation.
        using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(100));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => SieveQSender.ConnectAsync(Config(world), 1, world.StateDir("sender"), ct: cts.Token));
    }

    /// <summary>
    /// Keys made by `sieveq enrol request --name branch-7` are branch-7-sign and branch-7-agree: the SDK opens them under
    /// that name for whatever id the party was enrolled under, for the enrolment check, the lease and the messages.
    /// </summary>
    [Fact]
    public async Task A_sender_whose_keys_carry_their_own_name_connects_under_it()
    {
        await using var world = await SieveWorld.StartAsync();
        var own = Path.Combine(world.Directory, "branch-keys");
        Directory.CreateDirectory(own);
        var deploymentKeys = world.Context.Config.Resolve(world.Context.Config.KeyDirectory);
        File.Copy(Path.Combine(deploymentKeys, "sender-2-sign.pem"), Path.Combine(own, "branch-7-sign.pem"));
        File.Copy(Path.Combine(deploymentKeys, "sender-2-agree.pem"), Path.Combine(own, "branch-7-agree.pem"));
        var config = Config(world) with { Keys = new PemFileKeyStore(own) };

        var unnamed = await Assert.ThrowsAsync<SieveQConfigurationException>(() => SieveQSender.ConnectAsync(config, 2, world.StateDir("unnamed")));
        Assert.Contains("no key-agreement key 'sender-2-agree'", unnamed.Message, StringComparison.Ordinal);

        await using (var sender = await SieveQSender.ConnectAsync(config with { KeyName = "branch-7" }, 2, world.StateDir("named")))
        {
            var seq = await sender.SendAsync(SieveWorld.Receiver, "under its own name"u8.ToArray());
            await sender.WaitAcknowledgedAsync(seq).WaitAsync(TimeSpan.FromSeconds(30));
        }

        var bad = Assert.Throws<SieveQConfigurationException>(() => SieveQSender.Create(config with { KeyName = "branch 7/../x" }, 2, world.StateDir("bad")));
        Assert.Contains("key name 'branch 7/../x'", bad.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_vote_counts_one_answer_per_replica_and_believes_f_plus_1_alike()
    {
        var enrolled = new PartyStanding(PartyStandingState.Enrolled, "s", [1, 2], [3], ThroughOrdering: false);
        var other = enrolled with { SignaturePublicKey = [9] };
        var vote = new Internal.EnrolmentVote(f: 1);
        Assert.Null(vote.Add(0, enrolled));
        Assert.Null(vote.Add(0, enrolled));   // the same replica twice is one answer
        Assert.Equal(1, vote.Answered);
        Assert.Null(vote.Add(1, other));
        Assert.Equal(2, vote.Answered);
        Assert.Equal(1, vote.MostAlike);
        var believed = vote.Add(2, enrolled with { Name = "s" });
        Assert.NotNull(believed);
        Assert.True(believed.SameAs(enrolled));
        Assert.Equal(2, vote.MostAlike);
    }

    private static PemFileKeyStore OwnKeys(SieveWorld world, string party, int id)
    {
        var store = new PemFileKeyStore(Path.Combine(world.Directory, $"own-keys-{party}-{id}-{Guid.NewGuid():N}"));
        store.GetOrCreateSigningKey(PartyKeyNames.Signing(party, id)).Dispose();
        store.GetOrCreateAgreementKey(PartyKeyNames.Agreement(party, id)).Dispose();
        return store;
    }

    private static EnrolmentStanding Enrolled(PemFileKeyStore keys, int id) => new()
    {
        State = EnrolmentState.Enrolled,
        Name = $"sender-{id}",
        SignaturePublicKey = ByteString.CopyFrom(keys.ExportPublicKey(PartyKeyNames.Signing(PartyKeyNames.Sender, id))),
        AgreementPublicKey = ByteString.CopyFrom(keys.ExportPublicKey(PartyKeyNames.Agreement(PartyKeyNames.Sender, id))),
        ThroughOrdering = true,
    };
}
