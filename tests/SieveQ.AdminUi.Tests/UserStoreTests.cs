using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Tests;

public sealed class UserStoreTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-users-").FullName;
    private readonly ConsoleConfig _config = new() { Url = "http://127.0.0.1:1", MaxFailedLogins = 3, LockoutMinutes = 15 };
    private readonly ManualTime _time = new();

    private string UsersFile => Path.Combine(_dir, "users.json");

    [Fact]
    public async Task The_password_is_stored_only_as_a_PBKDF2_hash_in_an_owner_only_file()
    {
        var store = ConsoleUserStore.Open(UsersFile, _config, _time);
        var password = await store.AddAsync("admin", ConsoleRole.Administrator, CancellationToken.None);
        Assert.Matches("^[A-Za-z0-9]{20}$", password);
        var text = await File.ReadAllTextAsync(UsersFile);
        Assert.DoesNotContain(password, text, StringComparison.Ordinal);
        // Identity's v3 format: marker byte 0x01, then PRF, iteration count, salt and subkey.
        Assert.Contains("\"passwordHash\": \"AQAAAA", text, StringComparison.Ordinal);
        if (!OperatingSystem.IsWindows())
        {
            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(UsersFile));
        }
        Assert.Equal(LoginOutcome.Accepted, (await store.CheckAsync("admin", password, CancellationToken.None)).Outcome);
        Assert.Equal(LoginOutcome.Refused, (await store.CheckAsync("admin", password + "x", CancellationToken.None)).Outcome);
        Assert.Equal(LoginOutcome.Refused, (await store.CheckAsync("nobody", password, CancellationToken.None)).Outcome);
    }

    [Fact]
    public async Task Repeated_failures_lock_the_account_even_against_the_right_password_until_the_lockout_ends()
    {
        var store = ConsoleUserStore.Open(UsersFile, _config, _time);
        var password = await store.AddAsync("olga", ConsoleRole.Operator, CancellationToken.None);
        Assert.Equal(LoginOutcome.Refused, (await store.CheckAsync("olga", "wrong", CancellationToken.None)).Outcome);
        Assert.Equal(LoginOutcome.Refused, (await store.CheckAsync("olga", "wrong", CancellationToken.None)).Outcome);
        Assert.Equal(LoginOutcome.LockedOut, (await store.CheckAsync("olga", "wrong", CancellationToken.None)).Outcome);
        Assert.Equal(LoginOutcome.LockedOut, (await store.CheckAsync("olga", password, CancellationToken.None)).Outcome);
        // The lockout is on disk: a restarted console keeps it.
        var reopened = ConsoleUserStore.Open(UsersFile, _config, _time);
        Assert.Equal(LoginOutcome.LockedOut, (await reopened.CheckAsync("olga", password, CancellationToken.None)).Outcome);
        _time.Now += TimeSpan.FromMinutes(16);
        Assert.Equal(LoginOutcome.Accepted, (await reopened.CheckAsync("olga", password, CancellationToken.None)).Outcome);
    }

    [Fact]
    public async Task A_user_added_by_another_process_is_seen_by_the_running_console()
    {
        var running = ConsoleUserStore.Open(UsersFile, _config, _time);
        await running.AddAsync("admin", ConsoleRole.Administrator, CancellationToken.None);
        // No wait: the second write may carry the first one's write time (a coarse file system, or the same tick).
        var password = await ConsoleUserStore.Open(UsersFile, _config, _time).AddAsync("vera", ConsoleRole.Viewer, CancellationToken.None);
        Assert.Equal(LoginOutcome.Accepted, (await running.CheckAsync("vera", password, CancellationToken.None)).Outcome);
    }

    [Fact]
    public async Task A_rewrite_with_the_same_length_and_write_time_is_still_seen_by_the_running_console()
    {
        var running = ConsoleUserStore.Open(UsersFile, _config, _time);
        await running.AddAsync("admin", ConsoleRole.Administrator, CancellationToken.None);
        var first = await running.AddAsync("vera", ConsoleRole.Viewer, CancellationToken.None);
        var written = File.GetLastWriteTimeUtc(UsersFile);
        var length = new FileInfo(UsersFile).Length;

        // Another process resets the password (a hash of the same length), and the file system gives the rewrite the
        // first write's time (a coarse granule: FAT, SMB, or two writes in one tick).
        // The hash's salt is random and its JSON escapes '+', so the reset is repeated until the file keeps its length.
        var other = ConsoleUserStore.Open(UsersFile, _config, _time);
        for (var i = 0; i < 200 && (i == 0 || new FileInfo(UsersFile).Length != length); i++)
        {
            await other.SetPasswordAsync("vera", "a-new-password-of-20c", null, CancellationToken.None);
        }
        File.SetLastWriteTimeUtc(UsersFile, written);
        Assert.Equal(length, new FileInfo(UsersFile).Length);

        Assert.Equal(LoginOutcome.Refused, (await running.CheckAsync("vera", first, CancellationToken.None)).Outcome);
        Assert.Equal(LoginOutcome.Accepted, (await running.CheckAsync("vera", "a-new-password-of-20c", CancellationToken.None)).Outcome);
    }

    [Theory]
    [InlineData("")]
    [InlineData("a b")]
    [InlineData("<script>")]
    public async Task Malformed_user_names_are_refused(string name)
    {
        var store = ConsoleUserStore.Open(UsersFile, _config, _time);
        await Assert.ThrowsAsync<ArgumentException>(() => store.AddAsync(name, ConsoleRole.Viewer, CancellationToken.None));
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private sealed class ManualTime : TimeProvider
    {
        public DateTimeOffset Now { get; set; } = new(2026, 11, 26, 6, 0, 0, TimeSpan.Zero);
        public override DateTimeOffset GetUtcNow() => Now;
    }
}
