using System.Diagnostics.CodeAnalysis;
using System.Text.RegularExpressions;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// console.json's <c>windowsSignIn</c>: Windows authentication (Negotiate, Kerberos only) is on when the section is
/// present. Roles come only from this mapping: a Kerberos principal (<c>alice@EXAMPLE.COM</c>) or a Windows account
/// (<c>EXAMPLE\alice</c>), and on Windows the user's groups by SID (<c>S-1-5-21-...</c>) or name
/// (<c>EXAMPLE\SieveQ Operators</c>), each to viewer, operator or administrator. An identity that maps to no role is
/// refused; one that maps to several gets the highest.
/// </summary>
public sealed partial record WindowsSignInConfig
{
    public const int MaxEntries = 256;
    public const int MaxNameLength = 64;

    /// <summary>
    /// The console's keytab (Linux), an absolute path; when absent the Kerberos library's own default applies
    /// (KRB5_KTNAME, else /etc/krb5.keytab). Never rendered or logged.
    /// </summary>
    public string? Keytab { get; init; }

    /// <summary>Principal or Windows account name to role name.</summary>
    public Dictionary<string, string> Principals { get; init; } = [];

    /// <summary>Group SID or Windows group name to role name (Windows only: other platforms give no groups).</summary>
    public Dictionary<string, string> Groups { get; init; } = [];

    /// <summary>Every rule at once, so an operator fixes the file in one go.</summary>
    public IReadOnlyList<string> Problems()
    {
        var problems = new List<string>();
        if (Principals.Count == 0 && Groups.Count == 0)
        {
            problems.Add("windowsSignIn maps nobody to a role: give principals (\"alice@EXAMPLE.COM\": \"operator\") or groups");
        }
        if (Principals.Count + Groups.Count > MaxEntries)
        {
            problems.Add($"windowsSignIn: at most {MaxEntries} principals and groups together");
        }
        foreach (var (name, role) in Principals)
        {
            if (!IsPrincipal(name))
            {
                problems.Add($"windowsSignIn.principals: '{Printable(name)}' is not a principal (name@REALM or DOMAIN\\name, at most {MaxNameLength} characters, no spaces)");
            }
            CheckRole(problems, "principals", name, role);
        }
        foreach (var (name, role) in Groups)
        {
            if (!IsGroup(name))
            {
                problems.Add($"windowsSignIn.groups: '{Printable(name)}' is not a group (a SID S-1-... or DOMAIN\\group name, at most {MaxNameLength} characters)");
            }
            CheckRole(problems, "groups", name, role);
        }
        if (Keytab is not null)
        {
            if (!OperatingSystem.IsLinux())
            {
                problems.Add("windowsSignIn.keytab is for Linux (elsewhere: KRB5_KTNAME in the service's environment; on Windows the service account's SPN holds the key, docs/console.md)");
            }
            else if (!Path.IsPathFullyQualified(Keytab) || Keytab.Any(char.IsControl))
            {
                problems.Add("windowsSignIn.keytab must be an absolute path");
            }
            else if (!File.Exists(Keytab))
            {
                problems.Add("windowsSignIn.keytab: no such file");
            }
            else if ((File.GetUnixFileMode(Keytab) & (UnixFileMode.OtherRead | UnixFileMode.OtherWrite)) != 0)
            {
                // The keytab is the console's Kerberos key: whoever reads it can pose as the console to every user.
                problems.Add("windowsSignIn.keytab must not be readable by others (chmod 600 or 640)");
            }
        }
        return problems;
    }

    /// <summary>Throws with every problem when the section is not usable; <paramref name="file"/> names console.json.</summary>
    public void Validate(string file)
    {
        var problems = Problems();
        if (problems.Count > 0)
        {
            throw new DeploymentException($"{file}: {string.Join("; ", problems)}");
        }
    }

    private static void CheckRole(List<string> problems, string section, string name, string role)
    {
        if (ParseRole(role) is null)
        {
            problems.Add($"windowsSignIn.{section}['{Printable(name)}']: unknown role '{Printable(role)}' (viewer, operator or administrator)");
        }
    }

    internal static ConsoleRole? ParseRole(string? role) => role switch
    {
        ConsolePolicies.Viewer => ConsoleRole.Viewer,
        ConsolePolicies.Operator => ConsoleRole.Operator,
        ConsolePolicies.Administrator => ConsoleRole.Administrator,
        _ => null,
    };

    /// <summary>A Kerberos principal (name[/instance]@REALM) or a Windows account (DOMAIN\name) as an identity's name.</summary>
    public static bool IsPrincipal([NotNullWhen(true)] string? name) =>
        name is { Length: > 0 and <= MaxNameLength } && (KerberosPrincipal().IsMatch(name) || WindowsAccount().IsMatch(name));

    public static bool IsGroup(string? name) =>
        name is { Length: > 0 and <= MaxNameLength } && (Sid().IsMatch(name) || WindowsGroup().IsMatch(name));

    /// <summary>
    /// The role for an authenticated identity and the mapping entry that gave it (kept in the session, so
    /// <see cref="SessionCheck"/> can look it up again), or null when nothing maps it.
    /// </summary>
    public (ConsoleRole Role, string MappedBy)? RoleFor(string principal, IEnumerable<string> groups)
    {
        ArgumentNullException.ThrowIfNull(groups);
        (ConsoleRole Role, string MappedBy)? best = null;
        if (PrincipalRole(principal) is { } own)
        {
            best = (own, PrincipalEntry + principal);
        }
        foreach (var group in groups)
        {
            if (GroupRole(group) is { } r && (best is null || r > best.Value.Role))
            {
                best = (r, GroupEntry + group);
            }
        }
        return best;
    }

    /// <summary>The role the entry <paramref name="mappedBy"/> gives now (null when it is gone): a session's re-check.</summary>
    public ConsoleRole? RoleOfEntry(string mappedBy) =>
        mappedBy.StartsWith(PrincipalEntry, StringComparison.Ordinal) ? PrincipalRole(mappedBy[PrincipalEntry.Length..])
        : mappedBy.StartsWith(GroupEntry, StringComparison.Ordinal) ? GroupRole(mappedBy[GroupEntry.Length..])
        : null;

    private const string PrincipalEntry = "principal:";
    private const string GroupEntry = "group:";

    // Kerberos principals compare exactly (MIT realms and names are case-sensitive); Windows names and SIDs as
    // Windows compares them, ignoring case.
    private ConsoleRole? PrincipalRole(string principal) =>
        Principals.FirstOrDefault(p => string.Equals(p.Key, principal, p.Key.Contains('\\', StringComparison.Ordinal) ? StringComparison.OrdinalIgnoreCase : StringComparison.Ordinal))
            is { Key: not null } hit ? ParseRole(hit.Value) : null;

    private ConsoleRole? GroupRole(string group) =>
        Groups.FirstOrDefault(g => string.Equals(g.Key, group, StringComparison.OrdinalIgnoreCase)) is { Key: not null } hit ? ParseRole(hit.Value) : null;

    private static string Printable(string s) =>
        new(s.Take(MaxNameLength + 8).Select(c => char.IsControl(c) ? '?' : c).ToArray());

    [GeneratedRegex(@"^[^\s\p{C}@\\/:']+(/[^\s\p{C}@\\/:']+)*@[A-Za-z0-9][A-Za-z0-9.-]*$")]
    private static partial Regex KerberosPrincipal();

    [GeneratedRegex(@"^[A-Za-z0-9][A-Za-z0-9.-]*\\[^\s\p{C}@\\/:']+$")]
    private static partial Regex WindowsAccount();

    [GeneratedRegex(@"^S-1-[0-9]+(-[0-9]+){1,15}$")]
    private static partial Regex Sid();

    [GeneratedRegex(@"^[A-Za-z0-9][A-Za-z0-9.-]*\\[^\p{C}@\\/:']*[^\s\p{C}@\\/:']$")]
    private static partial Regex WindowsGroup();
}
