namespace SieveQ.Cli.Running;

/// <summary>The start-time check the network components share: a component id, then the component's own option checks.</summary>
internal static class ComponentArguments
{
    /// <param name="validateOptions">The component's own checks, which throw <see cref="ArgumentException"/>.</param>
    /// <returns>Null when valid, else why not.</returns>
    public static string? Problem(int id, Action validateOptions)
    {
        if (id < 0)
        {
            return "--id must not be negative";
        }
        try
        {
            validateOptions();
            return null;
        }
        catch (ArgumentException e)
        {
            return e.Message;
        }
    }
}
