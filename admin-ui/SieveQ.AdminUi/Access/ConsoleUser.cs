namespace SieveQ.AdminUi.Access;

/// <summary>One local account as stored: the password only as an ASP.NET Core Identity PBKDF2 hash.</summary>
public sealed record ConsoleUser
{
    public required string Name { get; init; }
    public required ConsoleRole Role { get; init; }
    public required string PasswordHash { get; init; }
    public int FailedLogins { get; init; }
    public DateTimeOffset? LockedUntil { get; init; }
    /// <summary>A disabled account cannot sign in and its open sessions end at their next request.</summary>
    public bool Disabled { get; init; }

    /// <summary>
    /// The session that set the current password when its user changed it themselves: that session stands on with the
    /// old password's stamp, every other session of the account ends (<see cref="SessionStanding"/>). Null after a
    /// reset or a new account: every session signed in before it ends.
    /// </summary>
    public string? PasswordSetBySession { get; init; }
}
