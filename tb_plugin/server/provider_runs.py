"""Which runs TensorBoard's data provider already knows as Profscope's, from their event files.

The writer and ``profscope import`` record every span in an event file of the run folder
with summary metadata naming the ``profscope`` plugin (data class *tensor*; see
``profscope.writer.events``). TensorBoard reads event files anyway (in its Rust data
server, or its Python multiplexer), so asking its data provider is an in-memory lookup
instead of a walk of the logdir, and it works for remote logdirs too. Runs written by
torch's own ``tensorboard_trace_handler`` have no such event file: the plugin still finds
those by scanning.

The provider API (TensorBoard 2.x, ``tensorboard.data.provider.DataProvider``) takes a
``RequestContext`` and an ``experiment_id``, which is ``""`` for a local logdir; this
module asks outside of any request, so it uses an empty context and that id.
"""

from __future__ import annotations

from typing import Any, Optional

from tensorboard import context as tb_context

from .. import layout

# The experiment of a plain `tensorboard --logdir` (what plugin_util.experiment_id gives such requests).
LOCAL_EXPERIMENT_ID = ""


def _provider(context: Any) -> Optional[Any]:
    return getattr(context, "data_provider", None)


def has_profscope_data(context: Any) -> bool:
    """Whether the data provider has any time series of the ``profscope`` plugin (False without a provider)."""
    provider = _provider(context)
    if provider is None:
        return False
    plugins = provider.list_plugins(tb_context.RequestContext(), experiment_id=LOCAL_EXPERIMENT_ID)
    if plugins is None:  # an optional operation the provider does not support: ask for the runs instead
        return bool(runs_with_profscope_data(context))
    return layout.PLUGIN_NAME in plugins


def runs_with_profscope_data(context: Any) -> set[str]:
    """Names of the runs (paths relative to the logdir) with Profscope span records in their event files."""
    provider = _provider(context)
    if provider is None:
        return set()
    series = provider.list_tensors(
        tb_context.RequestContext(), experiment_id=LOCAL_EXPERIMENT_ID, plugin_name=layout.PLUGIN_NAME
    )
    return {run for run, tags in (series or {}).items() if tags}
