using System.Globalization;
using System.Security.Claims;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;
using SieveQ.AdminUi.Access;

namespace SieveQ.AdminUi.Tests;

/// <summary>The back-channel logouts the console holds: matched by sid or subject and sign-in time, kept across a restart, failing closed.</summary>
public sealed class ProviderLogoutsTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-logouts-").FullName;
    private readonly FakeTimeProvider _time = new(DateTimeOffset.Parse("2026-11-27T20:00:00Z", CultureInfo.InvariantCulture));
    private string File => Path.Combine(_dir, "provider-logouts.json");

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private ProviderLogouts Open() => new(File, TimeSpan.FromMinutes(60), _time, NullLogger<ProviderLogouts>.Instance);

    private ClaimsPrincipal Session(string subject, string? sid) => new(new ClaimsIdentity(
    [
        new Claim(BackChannelLogout.SignedInAtClaim, _time.GetUtcNow().ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture)),
        new Claim(BackChannelLogout.SubjectClaim, subject),
        .. sid is null ? Array.Empty<Claim>() : [new Claim(BackChannelLogout.SidClaim, sid)],
    ], "Cookies"));

    [Fact]
    public void A_logout_ends_the_sessions_signed_in_before_it_with_its_sid_or_of_its_subject_and_outlives_a_restart()
    {
        var logouts = Open();
        var laptop = Session("subject-olga", "sid-1");
        var desktop = Session("subject-olga", "sid-2");
        var victor = Session("subject-victor", "sid-3");
        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.Equal(ProviderLogouts.Outcome.Recorded, logouts.Record("sid-1", "subject-olga", "jti-1"));
        Assert.True(logouts.Ended(laptop));
        Assert.False(logouts.Ended(desktop));
        Assert.Equal(ProviderLogouts.Outcome.Replayed, logouts.Record("sid-1", "subject-olga", "jti-1"));

        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.Equal(ProviderLogouts.Outcome.Recorded, logouts.Record(null, "subject-olga", "jti-2"));
        Assert.True(logouts.Ended(desktop));
        Assert.False(logouts.Ended(victor));
        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.False(logouts.Ended(Session("subject-olga", "sid-4")));

        // Restarted: the same file, the same answers.
        var restarted = Open();
        Assert.Equal(2, restarted.Count);
        Assert.True(restarted.Ended(laptop));
        Assert.True(restarted.Ended(desktop));
        Assert.False(restarted.Ended(victor));
    }

    [Fact]
    public void An_entry_goes_once_every_session_it_could_end_has_expired()
    {
        var logouts = Open();
        logouts.Record(null, "subject-olga", "jti-1");
        _time.Advance(TimeSpan.FromMinutes(61));
        logouts.Record(null, "subject-victor", "jti-2");
        Assert.Equal(1, logouts.Count);
    }

    [Fact]
    public void A_damaged_file_is_set_aside_and_every_provider_session_from_before_the_start_ends()
    {
        var before = Session("subject-olga", "sid-1");
        _time.Advance(TimeSpan.FromSeconds(1));
        System.IO.File.WriteAllText(File, "[{\"sid\": 7}");
        var logouts = Open();
        Assert.True(System.IO.File.Exists(File + ".bad"));
        Assert.True(logouts.Ended(before));
        _time.Advance(TimeSpan.FromSeconds(1));
        Assert.False(logouts.Ended(Session("subject-olga", "sid-2")));
    }
}
