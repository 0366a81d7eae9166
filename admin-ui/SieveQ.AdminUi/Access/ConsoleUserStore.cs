using System.Security.Cryptography;
using System.Text.Json;
using Microsoft.AspNetCore.Identity;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Access;

/// <summary>The outcome of a password check.</summary>
public enum LoginOutcome
{
    Accepted,
    Refused,
    LockedOut,
}

/// <summary>
/// The local accounts of a standalone install (users.json, owner-only): PBKDF2 hashes from Identity's
/// <see cref="PasswordHasher{TUser}"/>, and the lockout after <see cref="ConsoleConfig.MaxFailedLogins"/> failures,
/// persisted so a restart does not reset it. Passwords are generated here and never stored or logged in clear.
/// </summary>
public sealed class ConsoleUserStore
{
    public const int MaxUsers = 64;
    private const long MaxFileBytes = 256 * 1024;

    private readonly string _path;
    private readonly ConsoleConfig _config;
    private readonly TimeProvider _time;
    private readonly PasswordHasher<ConsoleUser> _hasher = new();
    private readonly SemaphoreSlim _gate = new(1, 1);
    private Dictionary<string, ConsoleUser> _users;
    private readonly FileChangeStamp _loaded;

    private ConsoleUserStore(string path, ConsoleConfig config, TimeProvider time, Dictionary<string, ConsoleUser> users)
    {
        _path = path;
        _config = config;
        _time = time;
        _users = users;
        _loaded = new FileChangeStamp(path, MaxFileBytes);
    }

    public int Count => _users.Count;

    public static ConsoleUserStore Open(string path, ConsoleConfig config, TimeProvider? time = null) =>
        new(path, config, time ?? TimeProvider.System, Read(path));

    private static Dictionary<string, ConsoleUser> Read(string path)
    {
        var users = new Dictionary<string, ConsoleUser>(StringComparer.Ordinal);
        if (File.Exists(path))
        {
            var list = BoundedJsonFile.Read<List<ConsoleUser>>(path, MaxFileBytes, ConsoleConfig.Options, "no user file") ?? [];
            foreach (var u in list.Take(MaxUsers))
            {
                users[u.Name] = u;
            }
        }
        return users;
    }

    /// <summary>`add-user` writes the file while the console runs: a changed file is read again before it is used.</summary>
    private void ReloadIfChanged()
    {
        if (_loaded.Changed())
        {
            _loaded.Take();
            _users = Read(_path);
        }
    }

    public static bool IsValidName(string name) =>
        name.Length is >= 1 and <= 64 && name.All(c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.');

    /// <summary>Creates a user with a generated password and returns that password (the only time it exists in clear).</summary>
    public async Task<string> AddAsync(string name, ConsoleRole role, CancellationToken ct)
    {
        if (!IsValidName(name))
        {
            throw new ArgumentException("a user name is 1-64 characters of letters, digits, '-', '_' or '.'", nameof(name));
        }
        if (!Enum.IsDefined(role))
        {
            throw new ArgumentException("unknown role", nameof(role));
        }
        var password = GeneratePassword();
        await _gate.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            ReloadIfChanged();
            if (_users.ContainsKey(name))
            {
                throw new ArgumentException($"user '{name}' exists already", nameof(name));
            }
            if (_users.Count >= MaxUsers)
            {
                throw new InvalidOperationException($"at most {MaxUsers} local users");
            }
            var user = new ConsoleUser { Name = name, Role = role, PasswordHash = "" };
            _users[name] = user with { PasswordHash = Hash(user, password) };
            await SaveAsync(ct).ConfigureAwait(false);
        }
        finally
        {
            _gate.Release();
        }
        return password;
    }

    /// <summary>Checks a password; counts failures and locks the account after too many. A locked account is refused even with the right password.</summary>
    public async Task<(LoginOutcome Outcome, ConsoleUser? User)> CheckAsync(string name, string password, CancellationToken ct)
    {
        await _gate.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            ReloadIfChanged();
            var now = _time.GetUtcNow();
            if (!_users.TryGetValue(name, out var user))
            {
                // Same work as for a real user, so timing does not tell which names exist.
                _hasher.VerifyHashedPassword(Dummy, Dummy.PasswordHash, password);
                return (LoginOutcome.Refused, null);
            }
            if (user.LockedUntil is { } until && until > now)
            {
                return (LoginOutcome.LockedOut, null);
            }
            if (user.Disabled)
            {
                _hasher.VerifyHashedPassword(Dummy, Dummy.PasswordHash, password);
                return (LoginOutcome.Refused, null);
            }
            var verdict = _hasher.VerifyHashedPassword(user, user.PasswordHash, password);
            if (verdict == PasswordVerificationResult.Failed)
            {
                var failed = user.FailedLogins + 1;
                var locked = failed >= _config.MaxFailedLogins;
                _users[name] = user with { FailedLogins = locked ? 0 : failed, LockedUntil = locked ? now.AddMinutes(_config.LockoutMinutes) : null };
                await SaveAsync(ct).ConfigureAwait(false);
                return (locked ? LoginOutcome.LockedOut : LoginOutcome.Refused, null);
            }
            var updated = user with
            {
                FailedLogins = 0,
                LockedUntil = null,
                PasswordHash = verdict == PasswordVerificationResult.SuccessRehashNeeded ? _hasher.HashPassword(user, password) : user.PasswordHash,
            };
            if (updated != user)
            {
                _users[name] = updated;
                await SaveAsync(ct).ConfigureAwait(false);
            }
            return (LoginOutcome.Accepted, updated);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>The account as stored now, or null: what a session is checked against at each request.</summary>
    public async Task<ConsoleUser?> FindAsync(string name, CancellationToken ct)
    {
        await _gate.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            ReloadIfChanged();
            return _users.GetValueOrDefault(name);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>Every account, by name (the hashes stay in the records; pages show names, roles and states only).</summary>
    public async Task<IReadOnlyList<ConsoleUser>> ListAsync(CancellationToken ct)
    {
        await _gate.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            ReloadIfChanged();
            return _users.Values.OrderBy(u => u.Name, StringComparer.Ordinal).ToList();
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>
    /// Replaces a password (the caller has checked the current one with <see cref="CheckAsync"/>); the rule is
    /// <see cref="PasswordRule"/>. Every session of the account signed in with the old one ends, but
    /// <paramref name="bySession"/>: the user's own session when they changed it themselves.
    /// </summary>
    public Task SetPasswordAsync(string name, string password, string? bySession, CancellationToken ct) =>
        UpdateAsync(name, user => user with { PasswordHash = Hash(user, password), FailedLogins = 0, LockedUntil = null, PasswordSetBySession = bySession }, ct);

    /// <summary>
    /// An administrator's reset: a generated password (returned, the only time it exists in clear), the lockout
    /// cleared, and every session of the account ended (no session is kept: <see cref="ConsoleUser.PasswordSetBySession"/> null).
    /// </summary>
    public async Task<string> ResetPasswordAsync(string name, CancellationToken ct)
    {
        var password = GeneratePassword();
        await UpdateAsync(name, user => user with { PasswordHash = Hash(user, password), FailedLogins = 0, LockedUntil = null, PasswordSetBySession = null }, ct)
            .ConfigureAwait(false);
        return password;
    }

    /// <summary>Disables or enables an account; refused when it would leave no enabled administrator.</summary>
    public Task SetDisabledAsync(string name, bool disabled, CancellationToken ct) =>
        UpdateAsync(name, user => user with { Disabled = disabled }, ct);

    /// <summary>Sets an account's role; refused when it would leave no enabled administrator.</summary>
    public Task SetRoleAsync(string name, ConsoleRole role, CancellationToken ct)
    {
        if (!Enum.IsDefined(role))
        {
            throw new ArgumentException("unknown role", nameof(role));
        }
        return UpdateAsync(name, user => user with { Role = role }, ct);
    }

    private async Task UpdateAsync(string name, Func<ConsoleUser, ConsoleUser> change, CancellationToken ct)
    {
        await _gate.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            ReloadIfChanged();
            if (!_users.TryGetValue(name, out var user))
            {
                throw new ArgumentException($"no user '{name}'", nameof(name));
            }
            var updated = change(user);
            var remaining = _users.Values.Where(u => u.Name != name).Append(updated);
            if (!remaining.Any(u => u.Role == ConsoleRole.Administrator && !u.Disabled))
            {
                throw new InvalidOperationException("refused: that would leave no enabled administrator account");
            }
            _users[name] = updated;
            await SaveAsync(ct).ConfigureAwait(false);
        }
        finally
        {
            _gate.Release();
        }
    }

    private string Hash(ConsoleUser user, string password)
    {
        if (PasswordRule.Check(user.Name, password) is { } why)
        {
            throw new ArgumentException(why, nameof(password));
        }
        return _hasher.HashPassword(user, password);
    }

    private static readonly ConsoleUser Dummy = new()
    {
        Name = "",
        Role = ConsoleRole.Viewer,
        PasswordHash = new PasswordHasher<ConsoleUser>().HashPassword(new ConsoleUser { Name = "", Role = ConsoleRole.Viewer, PasswordHash = "" }, "not a password"),
    };

    /// <summary>20 characters from a 56-symbol alphabet without look-alikes: about 116 bits.</summary>
    private static string GeneratePassword() =>
        RandomNumberGenerator.GetString("abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", 20);

    private async Task SaveAsync(CancellationToken ct)
    {
        await using (var file = OwnerOnlyFile.CreateTemporary(_path))
        {
            await JsonSerializer.SerializeAsync(file, _users.Values.OrderBy(u => u.Name, StringComparer.Ordinal).ToList(), ConsoleConfig.Options, ct).ConfigureAwait(false);
        }
        OwnerOnlyFile.Commit(_path);
        _loaded.Take();
    }
}
