using System.Security.Claims;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// Who asked for a console change and from where: the signed-in user's name and the address of the browser's
/// connection that carried the request (<see cref="BrowserAddressClaim"/>). Written as "console user 'olga' from
/// 192.0.2.7", the way the audit log names the console user (the controller sees only the console's key and address).
/// </summary>
public sealed record ConsoleCaller(string Name, string? From)
{
    public static ConsoleCaller Of(ClaimsPrincipal user)
    {
        ArgumentNullException.ThrowIfNull(user);
        return new ConsoleCaller(user.Identity?.Name ?? "?", user.FindFirst(BrowserAddressClaim.Type)?.Value);
    }

    public override string ToString() => From is null ? $"console user '{Name}'" : $"console user '{Name}' from {From}";
}
