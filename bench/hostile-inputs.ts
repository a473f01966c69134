import { ScriptedModel } from '../lambdas/adapters/models/scripted-model.js';
import { MAXIMUM_RUN_INPUT_CHARACTERS } from '../lambdas/core/limits.js';
import { loadCl100kEstimator } from '../lambdas/core/skills/estimate-tokens.js';

/**
 * Issue #20 item 3: the synchronous work of the longest run input built to make it expensive,
 * 20 times each. Each sample is the time the event loop is held: the scripted model's patterns
 * (before: 2,000 spaces held it 3 s, 4,000 held it 23 s) and the cl100k count the context
 * window is fitted with (before: 40,000 letters held it 5 s).
 */
export async function measureHostileInputs(): Promise<Array<{ operation: string; durationsMs: number[] }>> {
  const filler = (text: string) => text.repeat(Math.ceil(MAXIMUM_RUN_INPUT_CHARACTERS / text.length));
  const longest = (text: string) => text.slice(0, MAXIMUM_RUN_INPUT_CHARACTERS);
  const model = new ScriptedModel();
  const estimator = await loadCl100kEstimator('anthropic.claude-sonnet');
  const shapes: Array<[string, () => unknown]> = [
    ['scripted model: search then spaces', () => converse(model, longest(`find pages for x${filler(' ')}`))],
    [
      'scripted model: unclosed quotes',
      () => converse(model, longest(`set the title of page 1 to '${filler("x'")}`)),
    ],
    ['cl100k count: one unbroken run of letters', () => estimator.countText(longest(filler('x')))],
  ];
  return shapes.map(([shape, work]) => {
    const durationsMs: number[] = [];
    for (let sample = 0; sample < 20; sample += 1) {
      const started = performance.now();
      work();
      durationsMs.push(performance.now() - started);
    }
    return { operation: `${shape}, 100,000 chars (#20)`, durationsMs };
  });
}

/** The scripted model parses before its first await: calling it runs the whole parse. */
function converse(model: ScriptedModel, text: string): void {
  void model.converse({
    model: 'scripted',
    tools: [],
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
  });
}
