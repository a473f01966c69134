// Placeholder while the run engine lands; replaced by the real wiring.
export async function handler(): Promise<never> {
  throw new Error('execute-tools: not wired yet');
}
