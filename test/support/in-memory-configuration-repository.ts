import {
  type Configuration,
  type ConfigurationRepository,
  configurationSchema,
  type StoredRecordReport,
  type Task,
  taskSchema,
} from '../../lambdas/core/configurations.js';
import type { PageRequest } from '../../lambdas/core/ports.js';
import { InMemoryCollection } from './in-memory-collection.js';

/**
 * An in-memory `ConfigurationRepository` for unit tests: records parsed by the core's schemas
 * on the way in, so a stored record never carries unknown keys (the inspect reads say so).
 *
 * @example
 * const configurations = new InMemoryConfigurationRepository({ configurations: [configuration] });
 */
export class InMemoryConfigurationRepository implements ConfigurationRepository {
  private readonly configurations = new InMemoryCollection<Configuration>((value) => value.configurationId);
  private readonly tasks = new InMemoryCollection<Task>((value) => value.taskId);

  public constructor(seed: { configurations?: readonly Configuration[]; tasks?: readonly Task[] } = {}) {
    for (const configuration of seed.configurations ?? [])
      this.configurations.put(configurationSchema.parse(configuration));
    for (const task of seed.tasks ?? []) this.tasks.put(taskSchema.parse(task));
  }

  public async inspectConfiguration(configurationId: string) {
    return reportOf(this.configurations.get(configurationId));
  }

  public async inspectTask(taskId: string) {
    return reportOf(this.tasks.get(taskId));
  }

  public async inspectConfigurationsPage(options: PageRequest) {
    const page = this.configurations.page(options);
    return { ...page, items: page.items.map((value) => ({ value, unknownKeys: [] })) };
  }

  public async inspectTasksPage(options: PageRequest) {
    const page = this.tasks.page(options);
    return { ...page, items: page.items.map((value) => ({ value, unknownKeys: [] })) };
  }

  public async getConfiguration(configurationId: string) {
    return this.configurations.get(configurationId);
  }

  public async getTask(taskId: string) {
    return this.tasks.get(taskId);
  }

  public async putConfiguration(configuration: Configuration) {
    this.configurations.put(configurationSchema.parse(configuration));
  }

  public async putTask(task: Task) {
    this.tasks.put(taskSchema.parse(task));
  }

  public async listConfigurations() {
    return this.configurations.list();
  }

  public async listTasks() {
    return this.tasks.list();
  }

  public async listConfigurationsPage(options: PageRequest) {
    return this.configurations.page(options);
  }

  public async listTasksPage(options: PageRequest) {
    return this.tasks.page(options);
  }

  public async deleteConfiguration(configurationId: string) {
    return this.configurations.delete(configurationId);
  }

  public async deleteTask(taskId: string) {
    return this.tasks.delete(taskId);
  }
}

function reportOf<Value>(value: Value | undefined): StoredRecordReport<Value> | undefined {
  return value === undefined ? undefined : { value, unknownKeys: [] };
}
