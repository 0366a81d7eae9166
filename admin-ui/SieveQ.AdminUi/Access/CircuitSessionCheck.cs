using System.Security.Claims;
using Microsoft.AspNetCore.Components.Authorization;
using Microsoft.AspNetCore.Components.Server;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// An open page holds the principal its connection authenticated and makes no further requests, so the cookie's check
/// (<see cref="SessionCheck"/>) never sees it: this checks the same rule (<see cref="SessionStanding"/>) every
/// <see cref="Interval"/> for each open page, and a session that no longer stands leaves the page signed out (its
/// buttons refused on the server from then on, the page sent to the sign-in page).
/// </summary>
public sealed class CircuitSessionCheck(ILoggerFactory loggers, ConsoleUserStore users, ConsoleConfig config, ProviderLogouts logouts, ConsoleMetrics metrics)
    : RevalidatingServerAuthenticationStateProvider(loggers)
{
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(10);

    private readonly ILogger _log = loggers.CreateLogger<CircuitSessionCheck>();

    protected override TimeSpan RevalidationInterval => Interval;

    protected override async Task<bool> ValidateAuthenticationStateAsync(AuthenticationState authenticationState, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(authenticationState);
        var user = authenticationState.User;
        if (await SessionStanding.StandsAsync(user, users, config.Oidc, config.WindowsSignIn, logouts, cancellationToken).ConfigureAwait(false))
        {
            return true;
        }
        metrics.SessionsEnded.Add(1, new KeyValuePair<string, object?>("where", "page"));
        _log.LogInformation("{User}: open page signed out, the session no longer stands", ConsoleCaller.Of(user ?? new ClaimsPrincipal()));
        return false;
    }
}
