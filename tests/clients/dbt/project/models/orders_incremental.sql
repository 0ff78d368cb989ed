{{ config(materialized='incremental', unique_key=['id'], distributed_by=['id'], buckets=1) }}
select id, customer, amount, status, updated_at from {{ source('raw', 'new_orders') }}
{% if is_incremental() %}
where updated_at > (select max(updated_at) from {{ this }})
{% endif %}
