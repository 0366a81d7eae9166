using System.Security.Claims;
using SieveQ.Controller;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// The reason the console sends the controller with a change: the text from the form after the name of the console
/// user who asked (the controller sees the console as one caller, so the user is named here). The controller takes
/// reasons of up to <see cref="ManagementApi.MaxReasonLength"/> characters with that name included, so a form takes
/// what is left after the longest name: a reason the form accepts is never refused at the controller for its length.
/// </summary>
public static class AttributedReason
{
    /// <summary>
    /// The longest console user name: a Kerberos principal of <see cref="WindowsSignInConfig.MaxNameLength"/> characters
    /// after "kerberos:". Local accounts (64), OpenID Connect users ("oidc:" and 64) and Windows accounts ("windows:" and 64) are shorter.
    /// </summary>
    public static readonly int MaxUserNameLength = "kerberos:".Length + WindowsSignInConfig.MaxNameLength;

    /// <summary>The longest text a reason field takes: the controller's limit less the longest attribution.</summary>
    public static readonly int MaxTextLength = ManagementApi.MaxReasonLength - Of(new string('u', MaxUserNameLength), "").Length;

    /// <summary>The name a request is attributed to.</summary>
    public static string UserOf(ClaimsPrincipal user)
    {
        ArgumentNullException.ThrowIfNull(user);
        return user.Identity?.Name ?? "?";
    }

    /// <summary>The reason as the controller gets it.</summary>
    public static string Of(string user, string text) => $"console user '{user}': {text}";

    /// <summary>Why the form's (trimmed) text cannot be sent for this user, or null when it can.</summary>
    public static string? Problem(string user, string text)
    {
        ArgumentNullException.ThrowIfNull(user);
        ArgumentNullException.ThrowIfNull(text);
        if (text.Length > MaxTextLength || text.Any(char.IsControl))
        {
            return $"the reason is at most {MaxTextLength} characters, without control characters";
        }
        var room = ManagementApi.MaxReasonLength - Of(user, "").Length;
        return text.Length > room
            ? $"the reason is at most {Math.Max(room, 0)} characters for the user name '{user}' (the controller keeps {ManagementApi.MaxReasonLength} with the name)"
            : null;
    }
}
