/** The expression parts of an UpdateItem (or a conditional write) as the document client takes them. */
export interface UpdateExpressionInput {
  readonly UpdateExpression: string;
  readonly ConditionExpression?: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, unknown>;
}

/**
 * Builds an UpdateItem expression with a placeholder for every attribute name and value: record
 * fields such as `status`, `state` and `turn` are DynamoDB reserved words, and DynamoDB refuses
 * a placeholder the expression does not use, so each is declared only when it is used.
 *
 * @example
 * const update = new UpdateExpression().set('status', 'running').remove('failure');
 * const condition = `attribute_exists(${update.name('pk')})`;
 * await client.send(new UpdateCommand({ TableName, Key, ...update.toInput(condition) }));
 */
export class UpdateExpression {
  private readonly names = new Map<string, string>();
  private readonly values: Record<string, unknown> = {};
  private valueCount = 0;
  private readonly setClauses: string[] = [];
  private readonly removeClauses: string[] = [];
  private readonly addClauses: string[] = [];
  private readonly deleteClauses: string[] = [];

  /** The placeholder of an attribute name, for this expression and its condition. */
  public name(attribute: string): string {
    let placeholder = this.names.get(attribute);
    if (placeholder === undefined) {
      placeholder = `#a${this.names.size}`;
      this.names.set(attribute, placeholder);
    }
    return placeholder;
  }

  /** The placeholder of a value, for this expression and its condition. */
  public value(value: unknown): string {
    const placeholder = `:v${this.valueCount}`;
    this.valueCount += 1;
    this.values[placeholder] = value;
    return placeholder;
  }

  public set(attribute: string, value: unknown): this {
    this.setClauses.push(`${this.name(attribute)} = ${this.value(value)}`);
    return this;
  }

  /** Sets the attribute when there is a value; undefined leaves it as it is. */
  public setWhenDefined(attribute: string, value: unknown): this {
    return value === undefined ? this : this.set(attribute, value);
  }

  /** The placeholder path of a nested attribute (`escalation.reached`), for this expression and its condition. */
  public path(attributes: readonly string[]): string {
    return attributes.map((attribute) => this.name(attribute)).join('.');
  }

  /** Sets a nested attribute; its parent map must exist. */
  public setPath(attributes: readonly string[], value: unknown): this {
    this.setClauses.push(`${this.path(attributes)} = ${this.value(value)}`);
    return this;
  }

  /** Sets every field of `fields` (undefined ones must be dropped first: DynamoDB has none). */
  public setAll(fields: Readonly<Record<string, unknown>>): this {
    for (const [attribute, value] of Object.entries(fields)) this.set(attribute, value);
    return this;
  }

  /** Appends `items` to a list attribute, creating the list if the item has none yet. */
  public appendToList(attribute: string, items: readonly unknown[]): this {
    const name = this.name(attribute);
    this.setClauses.push(
      `${name} = list_append(if_not_exists(${name}, ${this.value([])}), ${this.value(items)})`,
    );
    return this;
  }

  /** Adds `members` to a set attribute (ADD keeps one entry per member). */
  public addToSet(attribute: string, members: ReadonlySet<string>): this {
    this.addClauses.push(`${this.name(attribute)} ${this.value(members)}`);
    return this;
  }

  /** Takes `members` out of a set attribute (DynamoDB drops a set left empty). */
  public deleteFromSet(attribute: string, members: ReadonlySet<string>): this {
    this.deleteClauses.push(`${this.name(attribute)} ${this.value(members)}`);
    return this;
  }

  public remove(attribute: string): this {
    this.removeClauses.push(this.name(attribute));
    return this;
  }

  /** Removes the first `count` members of a list attribute (the later ones move up). */
  public removeListHead(attribute: string, count: number): this {
    for (let index = 0; index < count; index += 1)
      this.removeClauses.push(`${this.name(attribute)}[${index}]`);
    return this;
  }

  /** The command input; `condition` is built with this builder's `name` and `value`. */
  public toInput(condition?: string): UpdateExpressionInput {
    const clauses = [
      ['SET', this.setClauses.join(', ')],
      ['REMOVE', this.removeClauses.join(', ')],
      ['ADD', this.addClauses.join(', ')],
      ['DELETE', this.deleteClauses.join(', ')],
    ].filter(([, list]) => list !== '');
    return {
      UpdateExpression: clauses.map(([keyword, list]) => `${keyword} ${list}`).join(' '),
      ...(condition === undefined ? {} : { ConditionExpression: condition }),
      ExpressionAttributeNames: Object.fromEntries(
        [...this.names].map(([attribute, name]) => [name, attribute]),
      ),
      // DynamoDB refuses an empty value map: an expression with no value has none.
      ...(this.valueCount === 0 ? {} : { ExpressionAttributeValues: { ...this.values } }),
    };
  }
}
