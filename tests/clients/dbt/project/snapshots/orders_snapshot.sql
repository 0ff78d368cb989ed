{% snapshot orders_snapshot %}
{{ config(target_schema=target.schema, unique_key='id', strategy='timestamp', updated_at='updated_at') }}
select id, customer, amount, status, updated_at from {{ source('raw', 'new_orders') }}
{% endsnapshot %}
