using SieveQ.Agent.Identity;
using SieveQ.Deployment;
using SieveQ.Transport;

namespace SieveQ.Sdk.Tests;

/// <summary>
/// Who may use the agent (issue 21): SIDs in the deployment checked at load, and the caller decisions for Windows
/// callers (SID) and Unix callers (uid), without a pipe or socket (AgentTests covers the socket; the Wine check
/// in tests/SieveQ.Firewall.WineCheck covers the named pipe).
/// </summary>
public sealed class AgentCallerPolicyTests
{
    private const string AgentSid = "S-1-5-21-1004336348-1177238915-682003330-1001";
    private const string ListedSid = "S-1-5-21-1004336348-1177238915-682003330-1002";
    private const string StrangerSid = "S-1-5-21-1004336348-1177238915-682003330-1003";

    [Theory]
    [InlineData("S-1-5-18", "S-1-5-18")]
    [InlineData("s-1-5-32-544", "S-1-5-32-544")]
    [InlineData("S-1-5-21-0001-2-3-1000", "S-1-5-21-1-2-3-1000")]
    [InlineData("S-1-0x0000FFFFFFFF-7", "S-1-4294967295-7")]
    [InlineData("S-1-0x100000000000-7", "S-1-0x100000000000-7")]
    [InlineData("S-1-5-4294967295", "S-1-5-4294967295")]
    public void Canonicalizes_a_sid_as_windows_writes_it(string text, string canonical)
    {
        Assert.True(WindowsSid.TryCanonicalize(text, out var result));
        Assert.Equal(canonical, result);
    }

    [Theory]
    [InlineData("")]
    [InlineData("S-1-5")]                       // no subauthority
    [InlineData("S-2-5-18")]                    // revision 2
    [InlineData("X-1-5-18")]
    [InlineData("S-1-5-4294967296")]            // subauthority over 32 bits
    [InlineData("S-1-281474976710656-1")]       // authority over 48 bits
    [InlineData("S-1-0x1000000000000-1")]       // hex authority not 12 digits
    [InlineData("S-1-5--18")]
    [InlineData("S-1-5-+18")]
    [InlineData("S-1-5-18 ")]
    [InlineData("S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16")] // 16 subauthorities
    [InlineData("alice")]
    public void Refuses_what_is_not_a_sid(string text)
    {
        Assert.False(WindowsSid.TryCanonicalize(text, out _));
    }

    [Fact]
    public void A_deployment_with_a_malformed_allowed_sid_is_refused_at_load_naming_the_agent_and_the_entry()
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-sids-");
        try
        {
            var path = Path.Combine(dir.FullName, DeploymentFile.FileName);
            DeploymentFile.Save(Deployment(new AgentEntry { Name = "desk", Socket = "a.sock", AllowedSids = [ListedSid, "S-1-5-21-x"] }), path);
            var refused = Assert.Throws<DeploymentException>(() => DeploymentFile.Load(path));
            Assert.Contains("agent 'desk'", refused.Message, StringComparison.Ordinal);
            Assert.Contains("\"S-1-5-21-x\"", refused.Message, StringComparison.Ordinal);

            DeploymentFile.Save(Deployment(new AgentEntry { Name = "desk", Socket = "a.sock", AllowedSids = [ListedSid] }), path);
            Assert.Equal([ListedSid], DeploymentFile.Load(path).Agent("desk").AllowedSids);
        }
        finally
        {
            dir.Delete(recursive: true);
        }
    }

    [Fact]
    public void A_windows_caller_is_allowed_as_the_agents_own_user_as_local_system_or_when_listed()
    {
        var policy = new CallerPolicy(Entry([ListedSid]), ownUid: null, ownSid: AgentSid);
        policy.EnsureAllowed(WindowsCaller(AgentSid));
        policy.EnsureAllowed(WindowsCaller(WindowsSid.LocalSystem));
        policy.EnsureAllowed(WindowsCaller(ListedSid));
        policy.EnsureAllowed(WindowsCaller(ListedSid.ToLowerInvariant()));
    }

    [Fact]
    public void A_windows_caller_of_another_user_is_refused_naming_its_sid_and_process()
    {
        var policy = new CallerPolicy(Entry([ListedSid]), ownUid: null, ownSid: AgentSid);
        var refused = Assert.Throws<GrpcCallException>(() => policy.EnsureAllowed(WindowsCaller(StrangerSid)));
        Assert.Equal(GrpcStatusCode.PermissionDenied, refused.Status);
        Assert.Contains(StrangerSid, refused.Message, StringComparison.Ordinal);
        Assert.Contains("pid 4242 ", refused.Message, StringComparison.Ordinal);
        Assert.Contains(@"C:\apps\app.exe", refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_windows_caller_is_judged_by_its_sid_even_when_its_uid_field_matches_the_agents_uid()
    {
        // A Windows caller carries NoId as uid; an agent with the same number as its uid must not let it in by uid.
        var policy = new CallerPolicy(Entry([]), ownUid: PeerCredentials.NoId, ownSid: AgentSid);
        Assert.Throws<GrpcCallException>(() => policy.EnsureAllowed(WindowsCaller(StrangerSid)));
    }

    [Fact]
    public void An_unidentified_caller_is_refused()
    {
        var policy = new CallerPolicy(Entry([]), ownUid: 1000, ownSid: AgentSid);
        var refused = Assert.Throws<GrpcCallException>(() => policy.EnsureAllowed(null));
        Assert.Equal(GrpcStatusCode.PermissionDenied, refused.Status);
    }

    [Fact]
    public void A_unix_caller_is_allowed_as_the_agents_own_uid_or_when_listed_and_refused_otherwise()
    {
        var policy = new CallerPolicy(new AgentEntry { Name = "desk", Socket = "a.sock", AllowedUids = [1001], AllowedSids = [ListedSid] }, ownUid: 1000, ownSid: null);
        policy.EnsureAllowed(new PeerCredentials(7, 1000, 1000, "/usr/bin/app"));
        policy.EnsureAllowed(new PeerCredentials(7, 1001, 1001, "/usr/bin/app"));
        var refused = Assert.Throws<GrpcCallException>(() => policy.EnsureAllowed(new PeerCredentials(7, 1002, 1002, "/usr/bin/app")));
        Assert.Equal(GrpcStatusCode.PermissionDenied, refused.Status);
        Assert.Contains("user 1002", refused.Message, StringComparison.Ordinal);
    }

    private static PeerCredentials WindowsCaller(string sid) => new(4242, PeerCredentials.NoId, PeerCredentials.NoId, @"C:\apps\app.exe", sid);

    private static AgentEntry Entry(string[] allowedSids) => new() { Name = "desk", Socket = "a.sock", AllowedSids = allowedSids };

    private static DeploymentConfig Deployment(AgentEntry agent) => new()
    {
        F = 0,
        Replicas = [new ReplicaSqEntry { Id = 0, Name = "replica-sq-0", ApiUrl = "http://127.0.0.1:1" }],
        PreSqs = [new PreSqEntry { Id = 1, Name = "pre-sq-1", Url = "http://127.0.0.1:2" }],
        Agents = [agent],
    };
}
