/**
 * The inbox page's styles: inline, allowed by the page's policy (`style-src 'unsafe-inline'`,
 * which runs nothing). Sized for a phone as well: at 390 px the controls stack and keep a
 * 44 px touch height.
 */
export const INBOX_PAGE_STYLE = `
:root { color-scheme: light; --ink: #1d1d1f; --muted: #55555b; --line: #d2d2d7; --panel: #f5f5f7; }
body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: var(--ink); background: #fbfbfd; }
.top { display: flex; align-items: center; justify-content: space-between; gap: .5rem 1rem; flex-wrap: wrap;
  max-width: 60rem; margin: 0 auto; padding: 1rem 1rem .5rem; }
.top h1 { font-size: 1.35rem; margin: 0; }
.top nav { display: flex; gap: .25rem 1rem; flex-wrap: wrap; }
.top nav a { color: #1d4f91; text-decoration: none; padding: .25rem 0; }
.top nav a[aria-current=page] { font-weight: 700; text-decoration: underline; text-underline-offset: .3em; }
#account { display: flex; align-items: center; gap: .5rem; flex-wrap: wrap; color: var(--muted); }
#account[hidden] { display: none; }
main { max-width: 60rem; margin: 0 auto; padding: 0 1rem 2rem; }
main h2.view-title { font-size: 1.25rem; margin: .75rem 0; }
#token-form { display: flex; gap: .5rem; align-items: end; flex-wrap: wrap; }
#token-form label { display: flex; flex-direction: column; flex: 1 1 16rem; font-weight: 600; }
#sign-in details { margin-top: 1.5rem; color: var(--muted); }
#filters { display: flex; gap: .5rem .75rem; align-items: end; flex-wrap: wrap; margin: 0 0 .5rem; }
#filters label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); flex: 1 1 8rem; }
#filters input, #filters select { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 6px;
  background: #fff; color: var(--ink); }
#live { min-height: 1.5rem; display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; color: #1d4f91; }
a { color: #1d4f91; }
:focus-visible { outline: 3px solid #1d4f91; outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: .5rem; background: #fff; padding: .25rem .5rem; }
.run-summary { color: var(--muted); margin: .25rem 0 .75rem; }
.context blockquote { margin: .2rem 0 .5rem; padding: .4rem .75rem; border-left: 4px solid var(--line); background: var(--panel);
  border-radius: 0 6px 6px 0; } .context blockquote p { margin: 0; white-space: pre-wrap; word-break: break-word; }
.cut-note { color: var(--muted); font-size: .85em; }
.approve-warning { margin: .75rem 0 0; padding: .5rem .75rem; border-radius: 6px; background: #fff4e5; color: #7a4100;
  font-weight: 600; }
.diff { margin: .4rem 0; } .diff-title { font-size: .85rem; color: var(--muted); margin: .2rem 0; }
.diff-text { margin: 0; white-space: pre-wrap; word-break: break-word; }
.diff del { background: #fde2e0; color: #8c1d18; } .diff ins { background: #dff3e4; color: #14532d; text-decoration: none; }
.diff del, .diff ins { border-radius: 3px; padding: 0 .1em; } .diff-cut { color: var(--muted); font-style: italic; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.audit ol { padding-left: 1.25rem; } .audit li { margin: .35rem 0; }
.history-list { list-style: none; padding: 0; } .history-list li { padding: .6rem 0; border-bottom: 1px solid var(--line); }
@media (max-width: 480px) {
  .card { padding: .75rem .8rem; } .calls { padding-left: 1rem; }
  .decision { flex-direction: column; align-items: stretch; } .actions button { flex: 1 1 auto; min-height: 44px; }
}
input[type=text], input[type=password] { font: inherit; padding: .45rem .6rem; border: 1px solid var(--line);
  border-radius: 6px; background: #fff; }
button { font: inherit; padding: .45rem 1rem; border-radius: 6px; border: 1px solid var(--line); background: #fff;
  color: var(--ink); cursor: pointer; }
button:disabled { opacity: .5; cursor: default; }
button.approve { background: #1f7a3d; border-color: #1f7a3d; color: #fff; font-weight: 600; }
button.primary { background: #1d4f91; border-color: #1d4f91; color: #fff; font-weight: 600; min-height: 44px; }
button.reject { border-color: #b3261e; color: #b3261e; font-weight: 600; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 1rem 1.25rem; margin: 1rem 0;
  box-shadow: 0 1px 2px rgba(0,0,0,.04); }
.card.unopenable { border-color: #b3261e; background: #fdf3f2; }
.card h2 { margin: 0 0 .25rem; font-size: 1.15rem; } .meta { color: var(--muted); margin: 0; }
.calls { padding-left: 1.25rem; } .call { margin: .75rem 0; } .tool { margin: 0 0 .25rem; }
.label { margin: .5rem 0 .2rem; font-size: .8rem; font-weight: 600; text-transform: uppercase; letter-spacing: .04em;
  color: var(--muted); }
pre.arguments { background: var(--panel); border-radius: 6px; padding: .6rem .75rem; margin: 0; overflow-x: auto;
  white-space: pre-wrap; word-break: break-word; font-size: .9rem; }
.excerpt-note { margin: 0 0 .3rem; font-size: .9rem; color: var(--muted); }
pre.arguments button.cut { font: inherit; padding: 0 .3rem; border-radius: 4px; border-color: #3a7bd5; color: #1d4f91;
  background: #eef4fc; }
.preview { border-left: 4px solid #3a7bd5; background: #f3f7fd; border-radius: 0 6px 6px 0; padding: .4rem .75rem; }
.preview ul { margin: .2rem 0; padding-left: 1.1rem; } .preview li { word-break: break-word; }
.preview.failed { border-color: #b3261e; background: #fdf3f2; }
.preview.withheld, .preview.none { border-color: #8e8e93; background: var(--panel); color: var(--muted); }
.preview p { margin: .2rem 0; } .caveat { font-size: .85em; color: var(--muted); }
.decision { display: flex; gap: 1rem; align-items: end; flex-wrap: wrap; margin-top: .75rem; }
.decision label { display: flex; flex-direction: column; flex: 1 1 18rem; font-size: .9rem; color: var(--muted); }
.actions { display: flex; gap: .5rem; }
.status:empty { display: none; }
.status { margin: .75rem 0 0; padding: .5rem .75rem; border-radius: 6px; background: var(--panel); }
.card[data-state=decided] .status { background: #e8f5ec; color: #14532d; }
.card[data-state=stale] .status, .card[data-state=refused] .status, .card[data-state=throttled] .status {
  background: #fff4e5; color: #7a4100; }
.card[data-state=expired] .status, .card[data-state=gone] .status, .card[data-state=failed] .status {
  background: #fdf3f2; color: #8c1d18; }
.times { color: var(--muted); margin: .1rem 0 0; display: flex; gap: 1.25rem; flex-wrap: wrap; font-size: .9rem; }
.deadline { font-weight: 600; }
.hidden-character { background: #fff1c2; color: #7a4100; border-radius: 3px; padding: 0 .1em; font-family: ui-monospace, monospace; font-size: .85em; }
bdi { unicode-bidi: isolate; }
.preview.refused { border-color: #8e8e93; background: var(--panel); }
.notice { margin: .75rem 0 0; padding: .5rem .75rem; border-radius: 6px; background: #fff4e5; color: #7a4100; }
.card[data-state=closed] { opacity: .75; } .card[data-state=closed] .deadline { color: #8c1d18; }
.edited { border-left: 3px solid #b26a00; padding-left: .6rem; margin: .5rem 0; } .edited ul { margin: .2rem 0; padding-left: 1.2rem; }
.refuse-call { display: block; margin-top: .4rem; font-size: .9rem; }
.warning, .error, .record-changed, .effect-unconfirmed { color: #a0261b; } .empty { color: var(--muted); font-size: 1.05rem; padding: 2rem 0; }
`;
